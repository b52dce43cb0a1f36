// Charges the subscriptions that fall due. Due work is found in the database
// (next_charge_at_ms <= the gateway clock), so a restart loses nothing and the sandbox clock
// (POST /sandbox/clock) makes a year of renewals fall due in seconds. Each subscription is
// claimed with a lease (on PostgreSQL through SELECT ... FOR UPDATE SKIP LOCKED), so
// instances sharing one database work on disjoint subscriptions; if a lease runs out while
// its holder is still busy, the renewal's idempotency key (operations/subscription-renewal.ts)
// still keeps the charge single.
import { randomBytes } from 'node:crypto';
import type { Merchant } from '../domain/merchants.js';
import type { OperationDeps } from '../operations/deps.js';
import { type RenewalOutcome, renewSubscription } from '../operations/subscription-renewal.js';
import type { Worker } from './due-work.js';

export interface BillingOptions {
  readonly deps: OperationDeps;
  readonly poll_ms: number;
  /** How long a claim holds, in real time (deps.wall_clock); longer than one renewal can take. */
  readonly lease_ms: number;
  /** Subscriptions claimed per pass. */
  readonly batch_size?: number;
  /** Renewals run at once within a pass. */
  readonly concurrency?: number;
  /** Names this instance in lease_owner; random by default. */
  readonly owner?: string;
  /** Sandbox: re-read the shared clock offset so instances agree on "now". */
  readonly sync_clock?: (() => Promise<void>) | undefined;
}

export interface BillingPass {
  /** Subscriptions claimed in this pass. */
  readonly claimed: number;
  readonly outcomes: readonly RenewalOutcome[];
}

export function billingOwner(): string {
  return `billing-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** One pass: claim what is due, renew each. Tests drive it directly, without timers. */
export async function runBillingOnce(options: BillingOptions & { readonly owner: string }): Promise<BillingPass> {
  const { deps } = options;
  if (options.sync_clock) await options.sync_clock();
  // Due on the gateway clock; the claim is held on the real clock, so moving the sandbox clock
  // cannot end it while a charge is in flight.
  const wall_ms = deps.wall_clock.now_ms();
  const claimed = await deps.store.transaction((tx) =>
    tx.subscriptions.claimDue(
      { due_ms: deps.clock.now_ms(), wall_ms },
      options.batch_size ?? 100,
      wall_ms + options.lease_ms,
      options.owner,
    ),
  );
  const outcomes: RenewalOutcome[] = [];
  // One merchant lookup per merchant per pass (a pass is short; a changed merchant is seen by the next one).
  const merchants = new Map<string, Promise<Merchant | null>>();
  const findMerchant = (merchant_id: string) => {
    let found = merchants.get(merchant_id);
    if (!found) merchants.set(merchant_id, (found = deps.merchants.find(merchant_id)));
    return found;
  };
  const queue = [...claimed];
  const lanes = Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 8, queue.length)) }, async () => {
    for (let sub = queue.shift(); sub !== undefined; sub = queue.shift()) {
      try {
        outcomes.push(await renewSubscription(deps, sub, options.owner, findMerchant));
      } catch (error) {
        // The lease runs out and the subscription is claimed again; the idempotency key keeps the charge single.
        deps.logger.error({ err: error, subscription_id: sub.subscription_id }, 'subscription renewal failed');
      }
    }
  });
  await Promise.all(lanes);
  for (const outcome of outcomes) {
    if (outcome.kind === 'failed') deps.logger.warn({ ...outcome }, 'subscription charge failed');
  }
  return { claimed: claimed.length, outcomes };
}

/** Polls until stopped; a failed pass is logged and retried on the next tick. */
export function startSubscriptionBilling(options: BillingOptions): Worker {
  const owner = options.owner ?? billingOwner();
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    running = runBillingOnce({ ...options, owner })
      .then(
        // A full batch means more may be due: go again at once.
        (pass) => pass.claimed >= (options.batch_size ?? 100),
        (error: unknown) => {
          options.deps.logger.error({ err: error }, 'subscription billing pass failed');
          return false;
        },
      )
      .then((again) => {
        if (!stopped) timer = setTimeout(tick, again ? 0 : options.poll_ms);
      });
  };
  timer = setTimeout(tick, options.poll_ms);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
