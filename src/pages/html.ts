// Server-rendered HTML: escaping and the page shell shared by every page a person sees.
// Pages work without JavaScript (decisions.md §12) and fit a phone screen.

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A value already escaped, so templates can nest without escaping twice. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    const rendered = Array.isArray(value)
      ? value.map((v) => (v instanceof Html ? v.text : escapeHtml(String(v)))).join('')
      : value instanceof Html
        ? value.text
        : value === null || value === undefined || value === false
          ? ''
          : escapeHtml(String(value));
    out += rendered + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:28rem;margin:0 auto;padding:1.25rem}
.card{background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:1.5rem}
h1{font-size:1.25rem;margin:0 0 .75rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:0 0 1.25rem}
dt{color:#6b7280}dd{margin:0;font-weight:600;word-break:break-all}
.badge{display:inline-block;background:#fef3c7;color:#92400e;border-radius:6px;padding:.1rem .5rem;font-size:.8rem;margin-bottom:.75rem}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}button{flex:1 1 8rem;font:inherit;font-weight:600;padding:.75rem 1rem;border-radius:8px;border:0;cursor:pointer;min-height:44px}
.primary{background:#2563eb;color:#fff}.secondary{background:#e5e7eb;color:#111827}
p.note{color:#4b5563;font-size:.9rem}
`;

export function page(title: string, body: Html, lang = 'en'): string {
  return (
    `<!doctype html><html lang="${escapeHtml(lang)}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title>` +
    `<style>${STYLE}</style></head><body><main>${body.text}</main></body></html>`
  );
}
