// A deposit paid from the customer's e-wallet (the hosted cashier's second method): reserved
// like any sale, then the customer confirms or cancels at the wallet (a challenge page).
import { processorReturnUrls } from './processor-return.js';
import type { OperationDeps } from './deps.js';
import { routePayment } from './gateway-choice.js';
import { finish, requestRow, reserve } from './lifecycle.js';
import type { SaleInput, SaleOutcome } from './sale.js';

/** A sale's request, paid from a wallet instead of a card, always by a customer who comes back. */
export type WalletSaleInput = Omit<SaleInput, 'card' | 'initiated_by' | 'mit_retry' | 'return_url'> & {
  readonly wallet_id: string;
  readonly return_url: string;
};

/** The same outcomes as a card sale. */
export type WalletSaleOutcome = SaleOutcome;

export async function processWalletSale(deps: OperationDeps, input: WalletSaleInput): Promise<WalletSaleOutcome> {
  const routing = await routePayment(
    deps,
    input.merchant,
    { currency: input.currency, amount_minor: input.amount_minor, card: null },
    input.gateway,
    'wallet_deposit',
  );
  if (routing.kind === 'refused') return { kind: 'no_gateway', refusal: routing.refusal };
  const { gateway, connector } = routing;
  const walletDeposit = connector.walletDeposit?.bind(connector);
  if (!walletDeposit)
    return {
      kind: 'no_gateway',
      refusal: { kind: 'capability', gateway_id: gateway.gateway_id, connector: gateway.connector, capability: 'e-wallet deposits' },
    };
  const now_ms = deps.clock.now_ms();
  const reservation = await reserve(
    deps,
    requestRow(
      input,
      {
        transaction_type: 'sale',
        gateway_id: gateway.gateway_id,
        payment_processor: connector.name,
        payment_method: 'ewallet',
        created_at_ms: now_ms,
      },
      {
        // The wallet account is shown masked on the wallet page, as for wallet payouts.
        data_json: JSON.stringify({ data_account_number: input.wallet_id }),
      },
    ),
  );
  if (reservation.kind === 'replay') return { kind: 'processed', answer: reservation.answer, replayed: true, own_commit: false };
  if (reservation.kind !== 'reserved') {
    if (reservation.kind === 'refused_by_guard') throw new Error('a wallet sale reservation has no guard to refuse it');
    return reservation;
  }
  const result = await walletDeposit({
    trace_id: reservation.row.trace_id,
    reference: input.cashier?.cashier_order_id ?? input.order_id,
    amount_minor: input.amount_minor,
    currency: input.currency,
    wallet_id: input.wallet_id,
    return_to: processorReturnUrls(deps, reservation.row.trace_id),
  });
  const answer = await finish(deps, reservation.row, result, connector);
  return { kind: 'processed', answer, replayed: false, own_commit: true };
}
