// The merchant's side of status notifications, for tests: a signature check written from
// decisions.md §1 with node:crypto alone (deliberately NOT importing src/domain/signing.ts, so a
// bug there cannot hide itself), signed replies (spec §6.3), and small waiting helpers.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ReceivedRequest, ReceiverReply } from './merchant-receiver.js';

/** decisions.md §1: values of every top-level field but `signature`, keys in code-point order, then the secret. */
export function merchantSigningString(message: Record<string, unknown>, secret: string): string {
  const codePoints = (key: string) => Array.from(key, (ch) => ch.codePointAt(0)!);
  const keys = Object.keys(message)
    .filter((k) => k !== 'signature')
    .sort((a, b) => {
      const x = codePoints(a);
      const y = codePoints(b);
      for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i]! - y[i]!;
      return x.length - y.length;
    });
  let text = '';
  for (const key of keys) {
    const value = message[key];
    if (value === null || value === undefined || value === false) continue;
    if (value === true) text += '1';
    else if (typeof value === 'string') text += value;
    else if (typeof value === 'number' && Number.isInteger(value)) text += value.toString(10);
    else throw new Error(`field ${key} is not signable: ${JSON.stringify(value)}`);
  }
  return text + secret;
}

export function merchantSign(message: Record<string, unknown>, secret: string): string {
  return createHash('sha384').update(merchantSigningString(message, secret), 'utf8').digest('hex');
}

export function merchantVerify(message: Record<string, unknown>, secret: string): boolean {
  const given = message.signature;
  if (typeof given !== 'string' || !/^[0-9a-f]{96}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(merchantSign(message, secret), 'hex'), Buffer.from(given, 'hex'));
}

/** A signed merchant reply (spec §6.3) with the given status. */
export function signedReply(secret: string, status = 0, description = status === 0 ? 'OK' : 'Refused'): ReceiverReply {
  const body: Record<string, unknown> = { status, description, version: '1.2', timestamp: Math.floor(Date.now() / 1000) };
  return { status: 200, body: { ...body, signature: merchantSign(body, secret) } };
}

/** The notification body of a request, or throws. */
export function notificationOf(request: ReceivedRequest): Record<string, unknown> {
  if (typeof request.json !== 'object' || request.json === null) throw new Error(`not a JSON notification: ${request.body}`);
  return request.json as Record<string, unknown>;
}

/** Polls `check` until it returns a value other than undefined/false; bounded. */
export async function waitUntil<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeout_ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout_ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
