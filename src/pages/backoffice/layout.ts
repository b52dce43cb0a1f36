// The back office's page shell (docs/backoffice.md): a header with the signed-in person and the
// sign-out button, navigation by role, and one stylesheet that fits a phone (each table row a
// card of "label: value" lines, filters folded behind their summary, the navigation wraps) and a
// desktop (tables share the width, long values wrap: nothing scrolls sideways at 1280 px). Server-rendered, no script: every action is a
// form, every form that changes something carries the CSRF token (csrfField).
import { type Viewer } from '../../domain/backoffice-access.js';
import { escapeHtml, Html, html } from '../html.js';

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}
header{background:#111827;color:#f9fafb;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
header .brand{font-weight:700;margin-right:auto}header form{margin:0}header span{min-width:0;overflow-wrap:anywhere}
header button{background:#374151;color:#f9fafb;border:0;border-radius:6px;padding:.35rem .8rem;font:inherit;cursor:pointer;min-height:36px}
nav{background:#1f2937;padding:.25rem .75rem;display:flex;flex-wrap:wrap;gap:.25rem}
nav a{color:#e5e7eb;text-decoration:none;padding:.45rem .6rem;border-radius:6px}nav a[aria-current=page]{background:#374151;color:#fff}
main{max-width:72rem;margin:0 auto;padding:1rem;overflow-wrap:break-word}h1,h2{overflow-wrap:anywhere}
h1{font-size:1.35rem;margin:.25rem 0 1rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.card{background:#fff;border-radius:10px;box-shadow:0 1px 3px rgba(0,0,0,.1);padding:1rem;margin-bottom:1rem}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.75rem;margin-bottom:1rem}
.tile{background:#fff;border-radius:10px;box-shadow:0 1px 3px rgba(0,0,0,.1);padding:.8rem}.tile .label{color:#6b7280;font-size:.85rem}.tile .value{font-size:1.3rem;font-weight:700}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;background:#fff;font-size:.9rem}th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid #e5e7eb;vertical-align:top}
th{background:#f9fafb;color:#374151;font-weight:600}td.wrap{overflow-wrap:anywhere;min-width:7rem}
details.filters{margin-bottom:1rem}details.filters>summary{cursor:pointer;font-weight:600;padding:.55rem .8rem;background:#fff;border-radius:10px;box-shadow:0 1px 3px rgba(0,0,0,.1);min-height:44px;display:flex;align-items:center}
details.filters>form{margin-top:.5rem}
@supports selector(details::details-content){@media (min-width:48.01rem){details.filters::details-content{content-visibility:visible;display:block}details.filters>summary{display:none}}}
@media (max-width:48rem){
table.rows,table.rows>tbody,table.rows>tbody>tr{display:block;width:100%}table.rows{background:none}
table.rows>thead{display:none}
table.rows>tbody>tr{background:#fff;border-radius:10px;box-shadow:0 1px 3px rgba(0,0,0,.1);margin-bottom:.6rem;padding:.35rem 0}
table.rows>tbody>tr>td{display:grid;grid-template-columns:minmax(6.5rem,38%) minmax(0,1fr);gap:.6rem;border:0;padding:.2rem .8rem;white-space:normal;overflow-wrap:anywhere;min-width:0}
table.rows>tbody>tr>td::before{content:attr(data-label);color:#6b7280;font-weight:600}table.rows>tbody>tr>td:empty{display:none}
table.rows>tbody>tr.refused{background:#fef2f2}
}
dl{display:grid;grid-template-columns:minmax(8rem,auto) 1fr;gap:.3rem 1rem;margin:0}dt{color:#6b7280}dd{margin:0;word-break:break-word}
form.fields{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.6rem;align-items:end}
label{display:flex;flex-direction:column;font-size:.85rem;color:#374151;gap:.2rem}
input,select,textarea{font:inherit;padding:.45rem .5rem;border:1px solid #d1d5db;border-radius:6px;background:#fff;min-height:40px;width:100%}
button.primary,button.secondary,button.danger{font:inherit;font-weight:600;padding:.5rem 1rem;border-radius:6px;border:0;cursor:pointer;min-height:40px}
.primary{background:#2563eb;color:#fff}.secondary{background:#e5e7eb;color:#111827}.danger{background:#dc2626;color:#fff}
.inline{display:inline-flex;gap:.4rem;align-items:end;flex-wrap:wrap;margin:.2rem 0}
.notice{border-radius:8px;padding:.7rem 1rem;margin-bottom:1rem}.ok{background:#dcfce7;color:#14532d}.error{background:#fee2e2;color:#7f1d1d}
.secret{font-family:ui-monospace,monospace;font-size:1.05rem;background:#fef3c7;padding:.6rem;border-radius:6px;word-break:break-all}
code.copy{font-family:ui-monospace,monospace;user-select:all;background:#f3f4f6;padding:.1rem .3rem;border-radius:4px;word-break:break-all}
h2.gateway-name{margin:0 0 .5rem}.muted{color:#6b7280}.pager{display:flex;gap:1rem;margin:.75rem 0}
figure{margin:0}figcaption{font-weight:600;margin-bottom:.4rem}svg{max-width:100%;height:auto}
.signin{max-width:24rem;margin:3rem auto}.signin form{display:grid;gap:.8rem}
pre.body{white-space:pre-wrap;word-break:break-all;font:.85rem/1.45 ui-monospace,monospace;overflow-x:auto}
pre.help-text{white-space:pre-wrap;margin:.3rem 0}tr.refused td{background:#fef2f2}
`;

export interface NavItem {
  readonly href: string;
  readonly label: string;
}

/** What each role finds in the navigation; a page not listed for a role answers as not found to it. */
export function navigationFor(viewer: Viewer): readonly NavItem[] {
  const common: NavItem[] = [
    { href: '/backoffice/overview', label: 'Overview' },
    { href: '/backoffice/transactions', label: 'Transactions' },
    { href: '/backoffice/disputes', label: 'Disputes' },
    { href: '/backoffice/payouts', label: 'Payouts' },
    { href: '/backoffice/subscriptions', label: 'Subscriptions' },
    { href: '/backoffice/request-log', label: 'Request log' },
  ];
  return viewer.role === 'operator'
    ? [
        ...common,
        { href: '/backoffice/merchants', label: 'Merchants' },
        { href: '/backoffice/gateways', label: 'Gateways' },
        { href: '/backoffice/users', label: 'Users' },
        { href: '/backoffice/audit', label: 'Audit log' },
      ]
    : [...common, { href: '/backoffice/credentials', label: 'API credentials' }];
}

export interface ShellContext {
  readonly viewer: Viewer;
  /** The CSRF token for this response's forms. */
  readonly csrf: string;
  /** The navigation entry to mark as current. */
  readonly current: string;
}

/** The success line a page shows after a form redirected to it with ?notice=…; only texts the page knows, never the query's. */
export function noticeLine(notice: unknown, known: Readonly<Record<string, string>>): Html | '' {
  return typeof notice === 'string' && Object.hasOwn(known, notice) ? html`<p class="notice ok" role="status">${known[notice]!}</p>` : '';
}

/** What went wrong with the form just sent, named for the person who sent it. */
export function problemLine(problem: string | null): Html | '' {
  return problem === null ? '' : html`<p class="notice error" role="alert">${problem}</p>`;
}

/**
 * A search's filters: on a phone folded behind "Filters" (how many are set in its summary), open
 * when `open` (a refused search, so that its field is seen); on a desktop always shown.
 */
export function filtersBox(form: Html, set_count: number, open: boolean): Html {
  return html`<details class="filters"${open ? new Html(' open') : ''}><summary>Filters${set_count > 0 ? ` (${set_count} set)` : ''}</summary>${form}</details>`;
}

export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}">`;
}

export function backOfficePage(title: string, context: ShellContext, body: Html): string {
  const { viewer } = context;
  const who = viewer.role === 'operator' ? `${viewer.email} (operator)` : `${viewer.email} (${viewer.merchant_id})`;
  const nav = navigationFor(viewer).map(
    (item) => html`<a href="${item.href}"${item.href === context.current ? new Html(' aria-current="page"') : ''}>${item.label}</a>`,
  );
  return shell(
    title,
    html`<header><span class="brand">paygate back office</span><span>${who}</span>
<form method="post" action="/backoffice/sign-out">${csrfField(context.csrf)}<button type="submit">Sign out</button></form></header>
<nav aria-label="Back office">${nav}</nav><main>${body}</main>`,
  );
}

/** A page without the navigation: sign-in. */
export function bareBackOfficePage(title: string, body: Html): string {
  return shell(title, html`<main>${body}</main>`);
}

function shell(title: string, body: Html): string {
  const text = body.text;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="same-origin">` +
    `<title>${escapeHtml(title)} · paygate back office</title><style>${STYLE}</style></head><body>${text}</body></html>`
  );
}
