// The requests the Stripe connector makes (connector.ts calls these): a card sale's (or an
// authorization's) PaymentIntent, the customer's billing details as Stripe takes them, and the
// idempotency key of every request that moves money (a capture's and a void's are the gateway's own). Apart from the connector so that what goes on the wire reads in one place, as
// hyperswitch keeps a connector's request building in its transformers.
import type Stripe from 'stripe';
import type { CardSaleRequest, Customer } from '../connector.js';

export function idempotencyKey(gateway_id: string, trace_id: number, operation: 'sale' | 'authorize' | 'refund'): string {
  return `paygate-${gateway_id}-${trace_id}-${operation}`;
}

/**
 * A card sale's PaymentIntent, confirmed at once with the card's data as the payment method's
 * data; an authorization (`capture: false`) is the same with capture_method manual: Stripe holds
 * the funds (requires_capture) until the capture or the cancel (decisions §16).
 */
export function saleParams(request: CardSaleRequest): Stripe.PaymentIntentCreateParams {
  const { card, customer } = request;
  const merchant_initiated = request.initiated_by === 'merchant';
  return {
    amount: request.amount_minor,
    currency: request.currency.toLowerCase(),
    confirm: true,
    // Cards only: without a list Stripe applies the Dashboard's automatic payment methods, which
    // want a return_url even for a card (allowed_payment_method_types since API 2026-09-30.endive).
    allowed_payment_method_types: ['card'],
    payment_method_data: {
      type: 'card',
      card: {
        number: card.pan,
        exp_month: card.expiry.month,
        exp_year: card.expiry.year,
        ...(card.cvv !== null ? { cvc: card.cvv } : {}),
      },
      billing_details: billingDetails(customer),
    },
    ...(request.return_to !== null ? { return_url: request.return_to.success_url } : {}),
    // A stored card charged by the merchant (a renewal): nobody is there to authenticate, and
    // Stripe declines what would need it (authentication_required).
    ...(merchant_initiated ? { off_session: true } : {}),
    ...(request.capture ? {} : { capture_method: 'manual' }),
    metadata: { paygate_trace_id: String(request.trace_id), paygate_reference: request.reference },
  } as unknown as Stripe.PaymentIntentCreateParams;
}

function billingDetails(customer: Customer): Record<string, unknown> {
  const name = [customer.first_name, customer.last_name].filter((part) => part !== null && part !== '').join(' ');
  const address: Record<string, string> = {};
  if (customer.address) address.line1 = customer.address;
  if (customer.city) address.city = customer.city;
  if (customer.state) address.state = customer.state;
  if (customer.zip) address.postal_code = customer.zip;
  if (customer.country && /^[A-Z]{2}$/.test(customer.country)) address.country = customer.country;
  return {
    ...(name !== '' ? { name } : {}),
    ...(customer.email ? { email: customer.email } : {}),
    ...(Object.keys(address).length > 0 ? { address } : {}),
  };
}
