// The back office's Disputes view (docs/backoffice.md): the disputes (chargebacks) processors
// reported, by evidence deadline, soonest first, so the one that needs the merchant's answer
// soonest is on top. Open ones by default (a stage after which something is still expected);
// closed ones or all on request. A merchant's staff see their merchant's only.
import { merchantScope, type Viewer } from '../domain/backoffice-access.js';
import { CLOSED_DISPUTE_STAGES, DISPUTE_STAGES, type DisputeRow } from '../domain/dispute-record.js';
import type { OperationDeps } from './deps.js';

/** What the view lists at most: the soonest deadlines first, so the ones left out are the latest. */
export const DISPUTES_PAGE_MAX = 100;

/** Which disputes the view shows; the first is the default. */
export const DISPUTE_SHOWS = ['open', 'closed', 'all'] as const;
export type DisputeShow = (typeof DISPUTE_SHOWS)[number];

const OPEN_STAGES = DISPUTE_STAGES.filter((stage) => !CLOSED_DISPUTE_STAGES.has(stage));
const CLOSED_STAGES = DISPUTE_STAGES.filter((stage) => CLOSED_DISPUTE_STAGES.has(stage));

/** The ?show= of the view: absent or empty is `open`; anything but the three is refused (null). */
export function disputeShow(raw: unknown): DisputeShow | null {
  if (raw === undefined || raw === '') return 'open';
  return DISPUTE_SHOWS.find((show) => show === raw) ?? null;
}

/** The disputes this viewer may see, `show` ones only, by deadline (those without one last), at most DISPUTES_PAGE_MAX. */
export function listDisputes(deps: Pick<OperationDeps, 'store'>, viewer: Viewer, show: DisputeShow): Promise<DisputeRow[]> {
  const stages = show === 'open' ? OPEN_STAGES : show === 'closed' ? CLOSED_STAGES : [];
  return deps.store.disputes.list({ merchant_id: merchantScope(viewer), stages }, DISPUTES_PAGE_MAX);
}
