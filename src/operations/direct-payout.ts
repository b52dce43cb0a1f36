// A direct payout to an e-wallet or bank account (spec §4.2). The route has checked the data_
// fields' names and sizes; the gateway's processor checks its own data_ fields (which are
// required, what they hold) and names the payment method before anything is stored. Then the
// same reserve → hold or processor → finish as a card payout. An e-wallet may answer
// pending_async with a redirect_url to its page, where the customer confirms or cancels.
import type { DataFieldProblem } from '../connectors/connector.js';
import { payoutMethodOf } from '../domain/routing.js';
import type { OperationDeps } from './deps.js';
import { payoutGateway, type PayoutOutcome, type PayoutRequestBase, payoutRow, runPayout } from './payout.js';

export interface DirectPayoutInput extends PayoutRequestBase {
  /** Every data_ field of the request, by full name. */
  readonly data: Readonly<Record<string, string>>;
}

export type DirectPayoutOutcome = PayoutOutcome | { readonly kind: 'invalid_data'; readonly problem: DataFieldProblem };

export async function processDirectPayout(deps: OperationDeps, input: DirectPayoutInput): Promise<DirectPayoutOutcome> {
  const chosen = await payoutGateway(
    deps,
    input.merchant,
    { currency: input.currency, amount_minor: input.amount_minor, card: null, payout_method: payoutMethodOf(input.data) },
    input.gateway,
    'direct_payout',
  );
  if (chosen.kind === 'refused') return { kind: 'no_gateway', refusal: chosen.refusal };
  const { gateway, connector } = chosen;
  const direct = connector.direct;
  if (!direct)
    return {
      kind: 'no_gateway',
      refusal: { kind: 'capability', gateway_id: gateway.gateway_id, connector: gateway.connector, capability: 'direct payouts' },
    };
  const check = direct.check(input.data);
  if (!check.ok) return { kind: 'invalid_data', problem: check.problem };
  const row = payoutRow(deps, input, gateway, connector, {
    payment_method: check.payment_method,
    data_json: Object.keys(input.data).length > 0 ? JSON.stringify(input.data) : null,
  });
  return runPayout(deps, row, gateway, connector, (reserved) =>
    direct.payout({
      trace_id: reserved.trace_id,
      reference: input.cashier?.cashier_order_id ?? input.order_id,
      amount_minor: input.amount_minor,
      currency: input.currency,
      method: check.payment_method,
      data: input.data,
      customer_present: true,
    }),
  );
}
