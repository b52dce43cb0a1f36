// `paygate sign`: signs a request body as the API expects (decisions.md §1), with no
// configuration or store. Apart from the entry (src/cli.ts) so that file stays the dispatch.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { bodySigningString, signBody } from '../domain/signing.js';

/** Body fields at most, as the API takes (decisions.md §5). */
const SIGN_MAX_BYTES = 64 * 1024;

/** `paygate sign`: what a merchant's code must produce, for a body written by hand or by a test. */
export function signCommand(args: string[]): number {
  const { values } = parseArgs({
    args,
    options: { secret: { type: 'string' }, file: { type: 'string' }, now: { type: 'boolean' } },
    strict: true,
  });
  if (!values.secret) {
    process.stderr.write('paygate sign: --secret is required (the merchant secret)\n');
    return 64;
  }
  const text = fs.readFileSync(values.file ?? 0, 'utf8');
  if (Buffer.byteLength(text) > SIGN_MAX_BYTES) {
    process.stderr.write(`paygate sign: the body is over ${SIGN_MAX_BYTES} bytes, which the API refuses\n`);
    return 65;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    process.stderr.write('paygate sign: the body must be a JSON object\n');
    return 65;
  }
  const message: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  delete message.signature;
  if (values.now) message.timestamp = Math.floor(Date.now() / 1000);
  const nested = Object.keys(message).find((key) => typeof message[key] === 'object' && message[key] !== null);
  if (nested !== undefined) {
    process.stderr.write(`paygate sign: field ${nested} is nested; the API takes flat values only\n`);
    return 65;
  }
  process.stderr.write(`signed: sha384hex of "${bodySigningString(message, '')}" + secret\n`);
  process.stdout.write(`${JSON.stringify({ ...message, signature: signBody(message, values.secret) })}\n`);
  return 0;
}
