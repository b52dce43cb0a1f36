// How the back office writes times, amounts and gateways: UTC to the second, amounts in the
// currency's own decimals, a gateway by its label (iso and money live in domain/backoffice-format.ts, which the audit lines use too).
// A currency the gateway does not know (a row older than a change to the list) is written in
// minor units, named as such, rather than failing the page.
import { formatAmount } from '../../domain/money.js';

export { iso, money } from '../../domain/backoffice-format.js';

/** A gateway as a page names it: its label, or its id when the page has no label for it (a gateway gone). */
export function gatewayName(labels: ReadonlyMap<string, string>, gateway_id: string): string {
  return labels.get(gateway_id) ?? gateway_id;
}

/** "42.50": the number alone, as a form's field shows it; '' for an unknown currency. */
export function majorUnits(amount_minor: number, currency: string): string {
  try {
    return formatAmount(amount_minor, currency).split(' ')[0]!;
  } catch {
    return '';
  }
}
