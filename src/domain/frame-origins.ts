// The origins allowed to frame an application's init-pay-in cashier pages (spec §4.3: "the
// redirect_url is intended for an iframe src"), as CSP frame-ancestors sources. An origin is
// scheme, host and port only: https://shop.example or http://localhost:8080.

/** At most this many per application: a CSP header stays short. */
export const FRAME_ORIGINS_MAX = 20;

/** The origin in its normal form, or null when the text is not an http(s) origin without path, query or credentials. */
export function normalizeFrameOrigin(text: string): string | null {
  if (text.length === 0 || text.length > 200 || /[\s;,'"]/.test(text)) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.pathname !== '/') return null;
  if (text.includes('?') || text.includes('#') || text.includes('@')) return null;
  return url.origin;
}

export type FrameOriginsCheck = { readonly ok: true; readonly origins: string[] } | { readonly ok: false; readonly invalid: string };

/** Checks and normalizes a list, keeping the first of duplicates. */
export function checkFrameOrigins(list: readonly string[]): FrameOriginsCheck {
  if (list.length > FRAME_ORIGINS_MAX) return { ok: false, invalid: `more than ${FRAME_ORIGINS_MAX} origins` };
  const origins: string[] = [];
  for (const text of list) {
    const origin = normalizeFrameOrigin(text);
    if (origin === null) return { ok: false, invalid: text };
    if (!origins.includes(origin)) origins.push(origin);
  }
  return { ok: true, origins };
}

/**
 * The framing headers of a page: `frame-ancestors` with the allowed origins, or `'none'` plus
 * X-Frame-Options DENY when nobody may frame it (older browsers know only the latter). Used by the
 * cashier pages and the sandbox 3-D Secure and wallet pages, so a page with Approve or Pay
 * buttons cannot be framed (clickjacked) by a site that was not configured for it.
 */
export function framingHeaders(origins: readonly string[] | null): {
  readonly frame_ancestors: string;
  readonly headers: Readonly<Record<string, string>>;
} {
  if (origins && origins.length > 0) return { frame_ancestors: `frame-ancestors ${origins.join(' ')}`, headers: {} };
  return { frame_ancestors: "frame-ancestors 'none'", headers: { 'x-frame-options': 'DENY' } };
}
