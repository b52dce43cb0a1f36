// How the back office writes times and amounts: UTC to the second, and amounts in the currency's
// own decimals. A currency the gateway does not know (a row older than a change to the list)
// is written in minor units, named as such, rather than failing the page.
import { formatAmount } from '../../domain/money.js';

/** "2026-11-24 03:37:33" (UTC); '' for no time. */
export function iso(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

/** "42.50 USD". */
export function money(amount_minor: number, currency: string): string {
  try {
    return formatAmount(amount_minor, currency);
  } catch {
    return `${amount_minor} ${currency} (minor units)`;
  }
}

/** "42.50": the number alone, as a form's field shows it; '' for an unknown currency. */
export function majorUnits(amount_minor: number, currency: string): string {
  try {
    return formatAmount(amount_minor, currency).split(' ')[0]!;
  } catch {
    return '';
  }
}
