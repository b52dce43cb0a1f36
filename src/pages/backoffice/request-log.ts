// The back office's Request log (issue 28, docs/backoffice.md): the search form (path or
// operation, API status, trace_id, from and to), the rows newest first with an "Older" link, and
// one request's page with its masked request and answer bodies. A refused signature's page puts
// the sandbox's help (the string the gateway hashed, the likely mistake) above everything else.
import type { Viewer } from '../../domain/backoffice-access.js';
import { type RequestLogQuery, type RequestLogRow, type RequestLogSummary, requestLogPageKey } from '../../domain/request-log-record.js';
import { type Html, html } from '../html.js';
import { iso } from './format.js';
import { filtersBox, problemLine } from './layout.js';
import { type ColumnSpec, dataTable, type Row } from './table.js';

export interface RequestLogListShown {
  readonly viewer: Viewer;
  readonly query: RequestLogQuery;
  readonly problem: string | null;
  readonly rows: readonly RequestLogSummary[];
  readonly more: boolean;
}

const SIGNATURE_REFUSED = 2;

function field(id: string, label: string, name: keyof RequestLogQuery, value: string, type = 'text', placeholder = ''): Html {
  return html`<label for="${id}">${label}<input id="${id}" name="${name}" type="${type}" value="${value}"${placeholder === '' ? '' : html` placeholder="${placeholder}"`}></label>`;
}

function olderHref(query: RequestLogQuery, last: RequestLogSummary): string {
  const params = new URLSearchParams();
  for (const name of ['path', 'api_status', 'trace_id', 'from', 'to'] as const) if (query[name] !== '') params.set(name, query[name]);
  params.set('before', requestLogPageKey(last));
  return `/backoffice/request-log?${params.toString()}`;
}

export function requestLogBody(shown: RequestLogListShown): Html {
  const { query, rows, viewer } = shown;
  const operator = viewer.role === 'operator';
  const columns: ColumnSpec[] = [
    'At (UTC)',
    'Method',
    { label: 'Path', wrap: true },
    { label: 'Operation', wrap: true },
    ...(operator ? [{ label: 'Merchant', wrap: true }] : []),
    'HTTP',
    'Status',
    { label: 'Description', wrap: true },
    'trace_id',
    'ms',
  ];
  const line = (r: RequestLogSummary): Row => ({
    class_name: r.api_status === SIGNATURE_REFUSED ? 'refused' : undefined,
    cells: [
      html`<a href="/backoffice/request-log/${r.id}">${iso(r.created_at_ms)}</a>`,
      r.method,
      r.route,
      r.operation,
      ...(operator ? [r.merchant_id ?? '—'] : []),
      r.http_code,
      r.api_status,
      html`${r.api_status === SIGNATURE_REFUSED ? html`<strong>Signature refused:</strong> ` : ''}${r.description ?? ''}`,
      r.trace_id,
      r.latency_ms,
    ],
  });
  const last = rows[rows.length - 1];
  return html`<h1>Request log</h1>
<p class="muted">Every API request (under /api/) with what it was answered; card numbers, CVVs, secrets, signatures and tokens are never kept in clear.</p>
${problemLine(shown.problem)}
${filtersBox(
  html`<form class="fields card" method="get" action="/backoffice/request-log">
${field('rl-path', 'Path or operation', 'path', query.path, 'text', '/api/process or sale')}
${field('rl-status', 'API status', 'api_status', query.api_status, 'text', '0, 2, 10…')}
${field('rl-trace', 'trace_id', 'trace_id', query.trace_id)}
${field('rl-from', 'From (UTC day)', 'from', query.from, 'date')}
${field('rl-to', 'To (UTC day)', 'to', query.to, 'date')}
<button class="primary" type="submit">Search</button></form>`,
  (['path', 'api_status', 'trace_id', 'from', 'to'] as const).filter((name) => query[name] !== '').length,
  shown.problem !== null,
)}
${rows.length === 0 ? html`<p class="card">No request matches.</p>` : dataTable(columns, rows.map(line), 'Requests')}
${shown.more && last !== undefined ? html`<div class="pager"><a rel="next" href="${olderHref(query, last)}">Older</a></div>` : ''}`;
}

/** JSON shown indented when it parses; as stored otherwise (a body cut to its limit). */
function bodyText(json: string | null): string {
  if (json === null) return '(none)';
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

export interface RequestLogDetailShown {
  readonly viewer: Viewer;
  readonly row: RequestLogRow;
  readonly signature_help: { readonly description: string | null; readonly error_details: string | null } | null;
}

export function requestLogDetailBody(shown: RequestLogDetailShown): Html {
  const { row, signature_help } = shown;
  const help =
    signature_help === null
      ? ''
      : html`<section class="notice error" role="alert" aria-label="Signature help"><h2>Signature refused</h2>
<p>The signature did not verify with the merchant's secret. The gateway hashes the values of every field but <code>signature</code>, in sorted key order, then the secret (SHA-384, lower-case hex): see docs/signing.md.</p>
${signature_help.description === null ? '' : html`<p><strong>Answer:</strong> <span class="help-text">${signature_help.description}</span></p>`}
${signature_help.error_details === null ? '' : html`<p><strong>Details:</strong></p><pre class="secret help-text">${signature_help.error_details}</pre>`}
<p class="muted">In the sandbox the answer carries the string the gateway hashed (the secret left out, card values masked) and the likely mistake; live mode says only "Invalid signature".</p></section>`;
  return html`<h1>Request ${row.id}</h1>
${help}
<div class="card"><dl>
<dt>At (UTC)</dt><dd>${iso(row.created_at_ms)}</dd>
<dt>Merchant</dt><dd>${row.merchant_id ?? '— (not identified)'}</dd>
<dt>Method and path</dt><dd>${row.method} ${row.path}</dd>
<dt>Route</dt><dd>${row.route}</dd>
<dt>Operation</dt><dd>${row.operation ?? '—'}</dd>
<dt>HTTP code</dt><dd>${row.http_code}</dd>
<dt>API status</dt><dd>${row.api_status ?? '—'}</dd>
<dt>Description</dt><dd>${row.description ?? '—'}</dd>
<dt>trace_id</dt><dd>${row.trace_id === null ? '—' : html`<a href="/backoffice/transactions/${row.trace_id}">${row.trace_id}</a>`}</dd>
<dt>Latency</dt><dd>${row.latency_ms} ms</dd>
</dl></div>
<h2>Request (masked)</h2><pre class="card body" aria-label="Request body">${bodyText(row.request_json)}</pre>
<h2>Answer (masked)</h2><pre class="card body" aria-label="Answer body">${bodyText(row.answer_json)}</pre>
<p><a href="/backoffice/request-log">Back to the request log</a></p>`;
}
