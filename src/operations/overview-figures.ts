// The back office's first page's figures (docs/backoffice.md): the last 30 days' activity summed
// by one grouped query (store/backoffice-store.ts activitySince) and worked out by
// domain/overview.ts, the payouts waiting for a decision and the notifications not acknowledged.
import { computeOverview, DAY_MS, type Overview, OVERVIEW_DAYS } from '../domain/overview.js';
import type { OperationDeps } from './deps.js';

export interface OverviewFigures {
  readonly overview: Overview;
  readonly payouts_waiting: number;
  readonly unacknowledged: number;
}

/** The figures of one merchant or (null) all, up to today (gateway clock, UTC days). */
export async function overviewFigures(deps: Pick<OperationDeps, 'store' | 'clock'>, merchant_id: string | null): Promise<OverviewFigures> {
  const { store, clock } = deps;
  const today = Math.floor(clock.now_ms() / DAY_MS);
  const [activity, payouts_waiting, unacknowledged] = await Promise.all([
    store.transactions.activitySince(merchant_id, (today - OVERVIEW_DAYS + 1) * DAY_MS),
    store.transactions.countByStatus(merchant_id, 'payout', 'requested'),
    store.notifications.countUnacknowledged(merchant_id),
  ]);
  return { overview: computeOverview(activity, today), payouts_waiting, unacknowledged };
}
