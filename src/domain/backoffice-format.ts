// How the back office writes times and amounts, in its pages and in its audit lines alike: UTC to
// the second, and amounts in the currency's own decimals. A currency the gateway does not know (a
// row older than a change to the list) is written in minor units, named as such, rather than
// failing the page. Here, not in pages/, because the operations that write the audit lines need them too.
import { formatAmount } from './money.js';

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
