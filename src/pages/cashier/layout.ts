// The cashier's page shell: one column that fits a phone and sits centred on a desktop, plain
// HTML forms, no script (decisions.md §12). Every string comes from text.ts.
import { escapeHtml, type Html, html } from '../html.js';
import type { Language, Say } from './text.js';

const STYLE = `
*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:30rem;margin:0 auto;padding:1rem}
@media (min-width:40rem){main{padding:2.5rem 1rem}}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:1.25rem 1.25rem 1.5rem}
.top{display:flex;justify-content:space-between;align-items:center;gap:.5rem;margin:0 0 .5rem;color:#6b7280;font-size:.875rem}
.badge{display:inline-block;background:#fef3c7;color:#92400e;border-radius:6px;padding:.05rem .5rem;font-size:.8rem;font-weight:600}
h1{font-size:1.375rem;line-height:1.3;margin:0 0 .75rem}h2{font-size:1.05rem;margin:1.25rem 0 .5rem}
dl.summary{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:0 0 1rem;padding:.75rem 1rem;background:#f9fafb;border-radius:8px}
dt{color:#4b5563}dd{margin:0;font-weight:600;text-align:right;overflow-wrap:anywhere}
.field{margin:0 0 .9rem}label{display:block;font-weight:600;margin:0 0 .25rem}
input{width:100%;font:inherit;padding:.6rem .75rem;border:1px solid #9ca3af;border-radius:8px;min-height:44px;background:#fff;color:#111827}
input:focus{outline:3px solid #93c5fd;outline-offset:0;border-color:#2563eb}
input[aria-invalid=true]{border-color:#b91c1c;background:#fef2f2}
.hint{display:block;color:#4b5563;font-size:.85rem;margin-top:.2rem}
.error{display:block;color:#b91c1c;font-size:.875rem;font-weight:600;margin-top:.2rem}
.row{display:flex;gap:.75rem}.row>.field{flex:1 1 0;min-width:0}
.alert{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;overflow-wrap:anywhere}
.alert p{margin:.25rem 0 0}.alert strong{display:block}
.bad{background:#fef2f2;color:#7f1d1d;border:1px solid #fecaca}
.good{background:#ecfdf5;color:#064e3b;border:1px solid #a7f3d0}
.wait{background:#eff6ff;color:#1e3a8a;border:1px solid #bfdbfe}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1rem}
button,.button{flex:1 1 12rem;display:inline-flex;align-items:center;justify-content:center;font:inherit;font-weight:600;padding:.7rem 1rem;border-radius:8px;border:0;cursor:pointer;min-height:44px;text-decoration:none;text-align:center}
.primary{background:#1d4ed8;color:#fff}.secondary{background:#e5e7eb;color:#111827}
.methods{display:grid;gap:.75rem;margin:0 0 .5rem}
.method{display:block;width:100%;text-align:left;background:#fff;color:#111827;border:1px solid #9ca3af;padding:.85rem 1rem}
.method small{display:block;font-weight:400;color:#4b5563}
.note{color:#4b5563;font-size:.85rem}
ul.payments{list-style:none;margin:0;padding:0}ul.payments li{display:flex;justify-content:space-between;gap:.5rem;padding:.4rem 0;border-top:1px solid #e5e7eb}
footer{text-align:center;color:#6b7280;font-size:.8rem;margin-top:.75rem}
`;

export interface ShellOptions {
  readonly language: Language;
  readonly say: Say;
  readonly title: string;
  /** Shown at the top left: the merchant the customer pays or is paid by. */
  readonly merchant: string | null;
  readonly sandbox: boolean;
  readonly footer?: string | null;
}

export function cashierShell(options: ShellOptions, body: Html): string {
  const top = html`<div class="top"><span>${options.merchant ?? ''}</span>${options.sandbox ? html`<span class="badge">${options.say('sandbox')}</span>` : ''}</div>`;
  const footer = options.footer ? html`<footer>${options.footer}</footer>` : '';
  return (
    `<!doctype html><html lang="${escapeHtml(options.language)}"><head><meta charset="utf-8">` +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<title>${escapeHtml(options.title)}</title><style>${STYLE}</style></head>` +
    `<body><main><div class="card">${top.text}${body.text}</div>${html`${footer}`.text}</main></body></html>`
  );
}
