// Remembers which body each v1.3 Gt-Authentication header came with, for as long as the header
// can be accepted (its timestamp's window), so that the same header arriving with another body
// (a replay of an observed header: it does not cover the body, decisions.md §2) is logged and
// counted. Refusing every reused header would allow an honest client one call per second, so by
// default the request still runs; merchants who switch on Gt-Body-Signature are protected
// (docs/security.md §3). Per instance: behind several instances each sees its own share.
import { createHash } from 'node:crypto';

/** Headers remembered at most; beyond it the oldest is forgotten (memory stays bounded under a flood). */
const REMEMBERED_MAX = 50_000;

export type HeaderSighting = 'first' | 'same_body' | 'other_body';

export class HeaderReuseWatch {
  private readonly seen = new Map<string, { readonly body_digest: string; readonly until_ms: number }>();

  /** remember_ms: how long a header can still be accepted after it is first seen (twice the timestamp window). */
  constructor(private readonly remember_ms: number) {}

  observe(header: string, body: string, now_ms: number): HeaderSighting {
    const body_digest = createHash('sha256').update(body).digest('base64');
    const earlier = this.seen.get(header);
    if (earlier && earlier.until_ms > now_ms) return earlier.body_digest === body_digest ? 'same_body' : 'other_body';
    this.seen.delete(header);
    if (this.seen.size >= REMEMBERED_MAX) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(header, { body_digest, until_ms: now_ms + this.remember_ms });
    return 'first';
  }
}
