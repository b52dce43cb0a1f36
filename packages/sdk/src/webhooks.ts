// The merchant's end of what the gateway sends: transaction status notifications (spec §6.2),
// validation requests (decisions.md §11), subscription events (docs/subscriptions.md §6) and the
// operator's test notification. A handler verifies each message (body signature, or the event's
// Gt-Authentication header) before anything reads it, parses it into a typed event, calls the
// merchant's function for that kind, and writes the signed reply the gateway expects (spec §6.3).
// The core (`handle`) knows no web framework; adapters for plain Node http, Express and Fastify
// only move bytes, typed structurally so that the SDK depends on none of them. Limits: the body's
// size, and how long the plain Node adapter waits for it.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { SubscriptionEventNotification, TransactionNotification, ValidationRequest } from './generated/api.js';
import { PaygateError } from './errors.js';
import { answerAuthentication, signaturesEqual, signBody, subscriptionEventAuthentication, verifyBody } from './signing.js';

/** A message from the gateway, verified and parsed. */
export type WebhookEvent =
  | { readonly kind: 'transaction'; readonly notification: TransactionNotification }
  /** The operator's test notification (docs/security.md §5): trace_id 0, `test` "1"; no transaction behind it. */
  | { readonly kind: 'test_notification'; readonly notification: TransactionNotification }
  | { readonly kind: 'validation'; readonly request: ValidationRequest }
  | { readonly kind: 'subscription_event'; readonly event: SubscriptionEventNotification };

/** Returned by a notification or event function to refuse it for good (status 1: not resent). Returning nothing accepts it. */
export interface Refusal {
  readonly refuse: string;
}

/** A validation request's answer: the deposit or withdrawal may go ahead, or not (the text is shown to the customer). */
export type ValidationVerdict = { readonly accept: true } | Refusal;

type Returned<T> = T | Promise<T>;

export interface WebhookHandlerOptions {
  /** The merchant's secret: messages are verified with it, replies signed with it. */
  readonly secret: string;
  /**
   * Other secrets a message may be signed with, for a roll (docs/security.md §5): the gateway signs
   * with the merchant's current secret at once, while this deployment may still hold the previous
   * one. The reply is signed with whichever verified.
   */
  readonly other_secrets?: readonly string[];
  /** Largest body read; default 64 KiB (a notification is about 1 KiB). */
  readonly max_body_bytes?: number;
  /** How long the plain Node adapter waits for the whole body; default 10 000. */
  readonly body_timeout_ms?: number;
  /**
   * A transaction changed status. Delivery is at least once and a resend is byte-identical:
   * deduplicate on trace_id + transaction_status. Throwing makes the gateway send it again later.
   * Besides a sale's outcome (approved, rejected ...): an authorization (transaction_type
   * `authorize`) is `authorized` while its funds are held, `approved` once captured (`amount` the
   * captured amount), `cancelled` once voided (by you, an agent, or its expiry); a payment is
   * `chargeback` when its customer disputes it (`amount` the disputed amount) and `reversed` when
   * refunded at the processor outside the gateway; a part refunded there comes as a `refund` of the
   * payment's order_id (decisions.md §16, docs/statuses.md).
   */
  readonly on_transaction?: (notification: TransactionNotification) => Returned<Refusal | void>;
  /** A cashier deposit or withdrawal awaits the merchant's yes. Without this function every one is refused. */
  readonly on_validation?: (request: ValidationRequest) => Returned<ValidationVerdict>;
  readonly on_subscription_event?: (event: SubscriptionEventNotification) => Returned<Refusal | void>;
  /** The operator's test notification; accepted when this is not given. */
  readonly on_test_notification?: (notification: TransactionNotification) => Returned<Refusal | void>;
  /** Told of each message refused before it reached a function (bad signature, too large ...) and each function that threw. */
  readonly on_error?: (error: WebhookError) => void;
  /** The clock of the replies' timestamps (unix milliseconds); Date.now by default. */
  readonly now_ms?: () => number;
}

/** Why a message was not handled, for the merchant's log. */
export class WebhookError extends PaygateError {
  override readonly name = 'WebhookError';
  constructor(
    message: string,
    readonly http_status: number,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** What to send back; the adapters write it as it is. */
export interface WebhookResponse {
  readonly http_status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The request as a framework hands it over: the body as bytes or text, or already parsed from JSON. */
export interface WebhookInput {
  readonly headers: IncomingHttpHeaders | Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
}

/** Express's request and response are Node's, with the body maybe parsed already (express.json()). */
type ExpressRequest = IncomingMessage & { body?: unknown };
type ExpressNext = (error?: unknown) => void;

/** The parts of Fastify's request and reply the adapter uses. */
export interface FastifyLikeRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
}
export interface FastifyLikeReply {
  code(status: number): FastifyLikeReply;
  headers(values: Record<string, string>): FastifyLikeReply;
  send(payload: string): unknown;
}

export interface WebhookHandler {
  /** The framework-free core. */
  handle(input: WebhookInput): Promise<WebhookResponse>;
  /** Plain Node http: `http.createServer((req, res) => handler.node(req, res))`, or inside your own routing. */
  node(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** Express: `app.post('/paygate', handler.express)`; works with or without express.json() before it. */
  express(request: ExpressRequest, response: ServerResponse, next: ExpressNext): void;
  /** Fastify: `app.post('/paygate', { bodyLimit: handler.max_body_bytes }, handler.fastify)`, or `app.route(handler.fastifyRoute('/paygate'))`. */
  fastify(request: FastifyLikeRequest, reply: FastifyLikeReply): Promise<void>;
  fastifyRoute(url: string): {
    method: 'POST';
    url: string;
    bodyLimit: number;
    handler: (request: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<void>;
  };
  readonly max_body_bytes: number;
}

const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
const DEFAULT_BODY_TIMEOUT_MS = 10_000;
const JSON_HEADERS = { 'content-type': 'application/json' } as const;

function header(headers: WebhookInput['headers'], name: string): string | undefined {
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/** An answer to a message that was not verified: unsigned, since nothing says who sent it. */
function rejected(http_status: number, status: number, description: string): WebhookResponse {
  return { http_status, headers: JSON_HEADERS, body: JSON.stringify({ status, description }) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function bodyText(body: unknown): string | null {
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return null;
}

/**
 * Verifies and parses a message, without answering it: the typed event and the secret that
 * verified it, or why it is refused. For merchants who write their own endpoint around it.
 */
export function parseWebhook(
  input: WebhookInput,
  secrets: readonly string[],
): { readonly ok: true; readonly event: WebhookEvent; readonly secret: string } | { readonly ok: false; readonly error: WebhookError } {
  let message: unknown = input.body;
  const text = bodyText(input.body);
  if (text !== null) {
    try {
      message = JSON.parse(text);
    } catch {
      return { ok: false, error: new WebhookError('body is not JSON', 400) };
    }
  }
  if (!isObject(message)) return { ok: false, error: new WebhookError('body is not a JSON object', 400) };
  const event_header = header(input.headers, 'gt-authentication');
  if (event_header !== undefined && typeof message.event === 'string') {
    // A subscription event: its Gt-Authentication header covers the event's identifying values.
    const secret = secrets.find((candidate) =>
      signaturesEqual(subscriptionEventAuthentication(message as Record<string, unknown>, candidate), event_header),
    );
    if (secret === undefined)
      return { ok: false, error: new WebhookError('Gt-Authentication header of a subscription event does not verify', 401) };
    if (typeof message.subscription_id !== 'string' || typeof message.subscription_status !== 'string') {
      return { ok: false, error: new WebhookError('subscription event without subscription_id or subscription_status', 400) };
    }
    return { ok: true, event: { kind: 'subscription_event', event: message as unknown as SubscriptionEventNotification }, secret };
  }
  const secret = secrets.find((candidate) => verifyBody(message as Record<string, unknown>, candidate));
  if (secret === undefined) {
    return {
      ok: false,
      error: new WebhookError(typeof message.signature === 'string' ? 'signature does not verify' : 'message is not signed', 401),
    };
  }
  if (typeof message.trace_id === 'number' && typeof message.transaction_status === 'string') {
    const notification = message as unknown as TransactionNotification;
    return {
      ok: true,
      event: message.test === '1' ? { kind: 'test_notification', notification } : { kind: 'transaction', notification },
      secret,
    };
  }
  if (typeof message.auth_token === 'string' && typeof message.order_id === 'string' && message.trace_id === undefined) {
    return { ok: true, event: { kind: 'validation', request: message as unknown as ValidationRequest }, secret };
  }
  return {
    ok: false,
    error: new WebhookError('a signed message that is neither a notification, a validation request nor a subscription event', 400),
  };
}

export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  if (!options.secret) throw new TypeError('secret is required');
  const secrets = [options.secret, ...(options.other_secrets ?? [])];
  const max_body_bytes = options.max_body_bytes ?? DEFAULT_MAX_BODY_BYTES;
  const body_timeout_ms = options.body_timeout_ms ?? DEFAULT_BODY_TIMEOUT_MS;
  if (!Number.isInteger(max_body_bytes) || max_body_bytes < 1024 || max_body_bytes > 16 * 1024 * 1024)
    throw new RangeError('max_body_bytes must be from 1024 to 16 MiB');
  if (!Number.isInteger(body_timeout_ms) || body_timeout_ms < 100 || body_timeout_ms > 600_000)
    throw new RangeError('body_timeout_ms must be from 100 to 600 000');
  const now_s = () => Math.floor((options.now_ms ?? Date.now)() / 1000);
  const report = (error: WebhookError) => {
    try {
      options.on_error?.(error);
    } catch {
      // The merchant's logging must not turn a reply into a crash.
    }
  };

  /** spec §6.3: status, description, version, timestamp, signature; a subscription event's reply also carries Gt-Authentication. */
  const signedReply = (status: number, description: string, version: string, secret: string, with_header: boolean): WebhookResponse => {
    const reply: Record<string, unknown> = { status, description: description.slice(0, 256), version, timestamp: now_s() };
    reply.signature = signBody(reply, secret);
    const headers: Record<string, string> = { ...JSON_HEADERS };
    if (with_header) headers['gt-authentication'] = answerAuthentication(status, reply.timestamp as number, secret);
    return { http_status: 200, headers, body: JSON.stringify(reply) };
  };

  async function handle(input: WebhookInput): Promise<WebhookResponse> {
    const text = bodyText(input.body);
    if (text !== null && Buffer.byteLength(text, 'utf8') > max_body_bytes) {
      report(new WebhookError(`body over ${max_body_bytes} bytes`, 413));
      return rejected(413, 22, 'Body too large');
    }
    const parsed = parseWebhook(input, secrets);
    if (!parsed.ok) {
      report(parsed.error);
      return rejected(
        parsed.error.http_status,
        parsed.error.http_status === 401 ? 2 : 10,
        parsed.error.http_status === 401 ? 'Invalid signature' : 'Unrecognized message',
      );
    }
    const { event, secret } = parsed;
    const version =
      event.kind === 'subscription_event' ? '1.3' : String((event.kind === 'validation' ? event.request : event.notification).version);
    const reply = (status: number, description: string) =>
      signedReply(status, description, version, secret, event.kind === 'subscription_event');
    try {
      let verdict: Refusal | ValidationVerdict | void;
      switch (event.kind) {
        case 'transaction':
          if (!options.on_transaction) throw new Error('no on_transaction function is given to the handler');
          verdict = await options.on_transaction(event.notification);
          break;
        case 'test_notification':
          verdict = options.on_test_notification ? await options.on_test_notification(event.notification) : undefined;
          break;
        case 'subscription_event':
          if (!options.on_subscription_event) throw new Error('no on_subscription_event function is given to the handler');
          verdict = await options.on_subscription_event(event.event);
          break;
        case 'validation':
          verdict = options.on_validation
            ? await options.on_validation(event.request)
            : { refuse: 'This shop does not take this payment here' };
          break;
      }
      if (verdict !== undefined && 'refuse' in verdict) return reply(1, verdict.refuse);
      return reply(0, event.kind === 'validation' ? 'Accepted' : 'OK');
    } catch (error) {
      report(new WebhookError(`the ${event.kind} function failed: ${error instanceof Error ? error.message : String(error)}`, 200, error));
      // spec §6.3: status -1 is the merchant's own trouble; the gateway sends the notification again
      // (a validation request is refused).
      return reply(-1, 'Merchant error: try again later');
    }
  }

  /** Reads a Node request's body within the size and time limits; null when it broke them (answered already). */
  async function readBody(request: IncomingMessage, response: ServerResponse): Promise<string | null> {
    const declared = Number(request.headers['content-length']);
    const refuse = (answer: WebhookResponse) => {
      write(response, answer, true);
      request.resume();
      return null;
    };
    if (Number.isFinite(declared) && declared > max_body_bytes) {
      report(new WebhookError(`body over ${max_body_bytes} bytes`, 413));
      return refuse(rejected(413, 22, 'Body too large'));
    }
    return new Promise<string | null>((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const end = (value: string | null, answer?: WebhookResponse) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        request.off('data', onData);
        if (answer) refuse(answer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        report(new WebhookError(`body not received within ${body_timeout_ms} ms`, 408));
        end(null, rejected(408, 25, 'Body not received in time'));
      }, body_timeout_ms);
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > max_body_bytes) {
          report(new WebhookError(`body over ${max_body_bytes} bytes`, 413));
          end(null, rejected(413, 22, 'Body too large'));
          return;
        }
        chunks.push(chunk);
      };
      request.on('data', onData);
      request.once('end', () => end(Buffer.concat(chunks).toString('utf8')));
      request.once('error', () => end(null));
    });
  }

  function write(response: ServerResponse, answer: WebhookResponse, close = false): void {
    if (response.headersSent) return;
    response.writeHead(answer.http_status, { ...answer.headers, ...(close ? { connection: 'close' } : {}) });
    response.end(answer.body);
  }

  async function node(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST', ...JSON_HEADERS }).end(JSON.stringify({ status: 21, description: 'Method not allowed' }));
      return;
    }
    const body = await readBody(request, response);
    if (body === null) return;
    write(response, await handle({ headers: request.headers, body }));
  }

  async function fastify(request: FastifyLikeRequest, reply: FastifyLikeReply): Promise<void> {
    const answer = await handle({ headers: request.headers, body: request.body });
    reply
      .code(answer.http_status)
      .headers({ ...answer.headers })
      .send(answer.body);
  }

  return {
    handle,
    node,
    express(request, response, next) {
      // express.json() (or express.text/raw) may have read the body already; otherwise it is still in the stream.
      const run =
        request.body !== undefined && !(isObject(request.body) && Object.keys(request.body).length === 0 && request.readable)
          ? handle({ headers: request.headers, body: request.body }).then((answer) => write(response, answer))
          : node(request, response);
      run.catch(next);
    },
    fastify,
    fastifyRoute: (url) => ({ method: 'POST', url, bodyLimit: max_body_bytes, handler: fastify }),
    max_body_bytes,
  };
}
