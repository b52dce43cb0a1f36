// HTML for the pages the fake payment processors show a person in a browser (their 3-D Secure
// challenge pages): escaping of text put into a page, the page around a body (no script, no
// outside resource, no favicon request), and the answers such a page is served with (never
// cached, so a test's browser never shows a stale challenge). Each fake's own pages (their look,
// their element ids) stay beside the fake.
import type http from 'node:http';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** A whole page: `title` is text (escaped here), `style` a style sheet, `body_html` the content of <main>, already HTML. */
export function htmlPage(title: string, style: string, body_html: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="data:,">' +
    `<title>${escapeHtml(title)}</title><style>${style}</style></head><body><main>${body_html}</main></body></html>`
  );
}

export interface PageAnswers {
  /** Answers `status` with this page. */
  page(status: number, html: string): void;
  /** Answers 303 to `location`. */
  redirect(location: string): void;
}

/** Answers to a browser's request; `noteStatus` hears each status sent (the fakes record it with the request). */
export function pageAnswers(response: http.ServerResponse, noteStatus: (status: number) => void): PageAnswers {
  return {
    page(status, html) {
      noteStatus(status);
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
    },
    redirect(location) {
      noteStatus(303);
      response.writeHead(303, { location, 'cache-control': 'no-store' }).end();
    },
  };
}

/**
 * A browser showing a fake's page may still ask for the site's icon: not an API request and not a
 * violation. Answers it 404 with no body (noted in `record`); whether `path` was that request.
 */
export function answeredIconRequest(path: string, response: http.ServerResponse, record: { status: number | null }): boolean {
  if (path !== '/favicon.ico') return false;
  record.status = 404;
  response.writeHead(404, { 'content-length': '0' }).end();
  return true;
}
