// The back office's Disputes view (decisions §16, docs/backoffice.md): the disputes (chargebacks)
// processors reported, by evidence deadline, soonest first; open ones unless ?show= says closed or
// all (anything else is refused, 400). A merchant's staff see their merchant's only. The read is
// operations/dispute-views.ts, the page pages/backoffice/disputes.ts.
import { DISPUTE_SHOWS, DISPUTES_PAGE_MAX, disputeShow, listDisputes } from '../../operations/dispute-views.js';
import { disputesBody } from '../../pages/backoffice/disputes.js';
import type { BackOfficeRoute, PageContext } from './plugin.js';

async function disputesPage(context: PageContext): Promise<unknown> {
  const show = disputeShow((context.request.query as Record<string, unknown>).show);
  const rows = show === null ? [] : await listDisputes(context.deps, context.viewer, show);
  return context.page(
    'Disputes',
    '/backoffice/disputes',
    disputesBody(context, { chosen: show, shows: DISPUTE_SHOWS }, rows, DISPUTES_PAGE_MAX),
    show === null ? 400 : 200,
  );
}

export function disputeRoutes(): BackOfficeRoute[] {
  return [{ method: 'GET', url: '/disputes', roles: ['operator', 'merchant'], handle: disputesPage }];
}
