// A merchant's client as the merchant's own code would write it: sign, post, verify the answer.
import { Agent, fetch } from 'undici';
import { signBody, verifyBody } from '../../src/domain/signing.js';

/**
 * Idle connections are dropped after a second, well before the gateway closes them (5 s): with the
 * default, a request sent after a pause of a few seconds on a loaded machine could go out on a
 * socket the gateway was closing ("other side closed"), which a client may not retry for a POST.
 */
const CONNECTIONS = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

export interface Answer {
  readonly http_status: number;
  readonly body: Record<string, unknown>;
}

export function nowSeconds(offset_s = 0): number {
  return Math.floor(Date.now() / 1000) + offset_s;
}

export function signed<T extends Record<string, unknown>>(body: T, secret: string): T & { signature: string } {
  return { ...body, signature: signBody(body, secret) };
}

export async function postJson(base_url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${base_url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    dispatcher: CONNECTIONS,
  });
  const text = await response.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { http_status: response.status, body: parsed };
}

/** Posts a signed body and checks the answer's signature with the merchant secret. */
export async function postSigned(base_url: string, path: string, body: Record<string, unknown>, secret: string): Promise<Answer> {
  const answer = await postJson(base_url, path, signed(body, secret));
  if (typeof answer.body.signature === 'string' && !verifyBody(answer.body, secret)) {
    throw new Error(`answer signature does not verify: ${JSON.stringify(answer.body)}`);
  }
  return answer;
}
