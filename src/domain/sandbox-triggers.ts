// The sandbox's flow triggers (issue 28, docs/triggers.md): one per status change a merchant's
// notification endpoint must handle. Each makes a real flow through the normal operations
// (operations/sandbox-flows.ts) and ends in the notification it names. Pure data: the route, the
// CLI's --list and the docs' test read the same table.
import type { SubscriptionEvent } from './subscription-state.js';
import type { TransactionStatus, TransactionType } from './transaction-state.js';

/** The notification a trigger ends in: a transaction's status, or a subscription's event. */
export type TriggerEnd =
  | { readonly kind: 'transaction'; readonly transaction_type: TransactionType; readonly status: TransactionStatus }
  | { readonly kind: 'subscription'; readonly event: SubscriptionEvent };

/**
 * What the flow waits for after it starts: nothing (it ends at once), the sandbox's asynchronous
 * settlement (PAYGATE_SANDBOX_SETTLE_SECONDS), its silent issuer (PAYGATE_SANDBOX_ISSUER_TIMEOUT_SECONDS),
 * or the billing worker's next pass (PAYGATE_BILLING_POLL_MS). The running gateway's own workers do it.
 */
export type TriggerWait = 'none' | 'async_settle' | 'issuer_timeout' | 'billing';

export interface TriggerDefinition {
  readonly name: string;
  /** One line: what happens and which test input makes it. */
  readonly summary: string;
  readonly ends_in: TriggerEnd;
  readonly wait: TriggerWait;
}

const sale = (status: TransactionStatus): TriggerEnd => ({ kind: 'transaction', transaction_type: 'sale', status });
const payout = (status: TransactionStatus): TriggerEnd => ({ kind: 'transaction', transaction_type: 'payout', status });
const subscription = (event: SubscriptionEvent): TriggerEnd => ({ kind: 'subscription', event });

export const SANDBOX_TRIGGERS: readonly TriggerDefinition[] = [
  { name: 'sale.approved', summary: 'a card sale approved at once (CVV 568)', ends_in: sale('approved'), wait: 'none' },
  { name: 'sale.rejected', summary: 'a card sale declined, Do not honor (CVV 000)', ends_in: sale('rejected'), wait: 'none' },
  {
    name: 'sale.pending_then_approved',
    summary: 'a card sale pending at the processor, approved a few seconds later (CVV 222)',
    ends_in: sale('approved'),
    wait: 'async_settle',
  },
  {
    name: 'sale.3ds_timed_out',
    summary: 'a card sale sent to 3-D Secure whose issuer never answers, rejected Transaction timed out (CVV 588, amount 713)',
    ends_in: sale('rejected'),
    wait: 'issuer_timeout',
  },
  {
    name: 'refund.approved',
    summary: 'a card sale approved, then refunded in full (the API refund)',
    ends_in: { kind: 'transaction', transaction_type: 'refund', status: 'approved' },
    wait: 'none',
  },
  { name: 'payout.approved', summary: 'a card payout approved (amount 1000)', ends_in: payout('approved'), wait: 'none' },
  { name: 'payout.rejected', summary: 'a card payout rejected by the processor (amount 1400)', ends_in: payout('rejected'), wait: 'none' },
  {
    name: 'payout.reversed',
    summary: "a card payout approved, then reversed at the processor (the operator's reverse)",
    ends_in: payout('reversed'),
    wait: 'none',
  },
  {
    name: 'sale.chargeback',
    summary: 'a card sale approved, then disputed in full by the issuer',
    ends_in: sale('chargeback'),
    wait: 'none',
  },
  {
    name: 'sale.reversed',
    summary: 'a card sale approved, then refunded in full at the processor outside the gateway (a reversal)',
    ends_in: sale('reversed'),
    wait: 'none',
  },
  {
    name: 'subscription.renewed',
    summary: 'a subscription charged at once and renewed (price 1000, one cycle, then it expires)',
    ends_in: subscription('subscription.renewed'),
    wait: 'billing',
  },
  {
    name: 'subscription.payment_failed',
    summary: 'a subscription whose charge fails, Insufficient funds (price 1402); one retry a day later',
    ends_in: subscription('subscription.payment_failed'),
    wait: 'billing',
  },
  {
    name: 'subscription.canceled',
    summary: 'a subscription in its 30-day trial, canceled by the merchant',
    ends_in: subscription('subscription.canceled'),
    wait: 'none',
  },
];

export function findTrigger(name: string): TriggerDefinition | null {
  return SANDBOX_TRIGGERS.find((trigger) => trigger.name === name) ?? null;
}

/** What a trigger's notification reports: a transaction status, or a subscription event. */
export function endLabel(end: TriggerEnd): string {
  return end.kind === 'transaction' ? `${end.transaction_type} ${end.status}` : end.event;
}
