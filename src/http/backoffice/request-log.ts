// The back office's Request log (issue 28, docs/backoffice.md): the list with its search form, and
// one request's page with its masked bodies. Operators see every row; a merchant's staff their own
// merchant's (operations/request-log-views.ts scopes by the viewer). The reads are that operation;
// the pages pages/backoffice/request-log.ts.
import { requestLogFilter } from '../../domain/request-log-record.js';
import { requestLogDetail, requestLogPage } from '../../operations/request-log-views.js';
import { requestLogBody, requestLogDetailBody } from '../../pages/backoffice/request-log.js';
import type { BackOfficeRoute, PageContext } from './plugin.js';

const CURRENT = '/backoffice/request-log';

async function listPage(context: PageContext): Promise<unknown> {
  const query = (context.request.query ?? {}) as Record<string, unknown>;
  const parsed = requestLogFilter(query, null);
  if (!parsed.ok) {
    const body = requestLogBody({ viewer: context.viewer, query: parsed.shown, problem: parsed.problem, rows: [], more: false });
    return context.page('Request log', CURRENT, body, 400);
  }
  const page = await requestLogPage(context.deps, context.viewer, parsed.filter);
  return context.page(
    'Request log',
    CURRENT,
    requestLogBody({ viewer: context.viewer, query: parsed.shown, problem: null, rows: page.rows, more: page.more }),
  );
}

async function detailPage(context: PageContext): Promise<unknown> {
  const raw = (context.request.params as Record<string, string>).id ?? '';
  const id = /^[1-9][0-9]{0,14}$/.test(raw) ? Number(raw) : null;
  const detail = id === null ? null : await requestLogDetail(context.deps, context.viewer, id);
  if (detail === null) return context.notFound(`request ${raw}`);
  return context.page(`Request ${detail.row.id}`, CURRENT, requestLogDetailBody({ viewer: context.viewer, ...detail }));
}

export function requestLogRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/request-log', roles: ['operator', 'merchant'], handle: listPage },
    { method: 'GET', url: '/request-log/:id', roles: ['operator', 'merchant'], handle: detailPage },
  ];
}
