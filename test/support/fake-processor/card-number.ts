// The Luhn check of a card number, as both fake processors apply it to the card data they are
// sent (Checkout.com answers card_number_invalid, Stripe incorrect_number). It is the tests' own
// rather than the gateway's (src/domain/cards.ts), so that a mistake in the gateway's check is
// caught by a fake instead of being shared with it.

/** Whether `number` is 12 to 19 digits whose Luhn checksum is 0. */
export function luhnValid(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i += 1) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}
