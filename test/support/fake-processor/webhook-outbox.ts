// The webhook sender of the fake payment processors: events are POSTed to the endpoint one at a
// time, in the order they were made, each signed with the endpoint's secret; a non-2xx answer or
// a network error is retried (a bounded number of attempts, a pause between them), as Checkout.com
// and Stripe both document. Tests steer it the same way for either processor: hold events and
// release them in any order (or twice), send one again, send any body with any signature, and
// wait for an event to be over. What differs between processors is only how a body is signed,
// which header carries the signature and the other headers of the POST; the fake passes those in.
// The events themselves (their bodies, their lists) belong to the fake: the outbox only updates
// their delivery state.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request as httpRequest } from 'undici';

/**
 * held: kept by holdEvents; queued: waiting for the events before it; sending: attempts under
 * way; delivered: a 2xx answer; failed: every attempt failed; no_endpoint: there was nowhere to send it.
 */
export type WebhookEventState = 'held' | 'queued' | 'sending' | 'delivered' | 'failed' | 'no_endpoint';

export interface WebhookDelivery {
  readonly attempt: number;
  /** The receiver's HTTP status, or null when it could not be reached. */
  readonly status: number | null;
  readonly error: string | null;
  /** The signature header's value sent (Cko-Signature, Stripe-Signature, …). */
  readonly signature: string;
  readonly at_ms: number;
  /** Sent by redeliver() or releaseHeldEvents() with an explicit order, not by the automatic sender. */
  readonly manual: boolean;
}

/** An event as a test sees it: what the events of every fake have (each fake adds its own fields). */
export interface WebhookEventView {
  readonly id: string;
  readonly type: string;
  /** The exact bytes sent (and signed). */
  readonly body: string;
  readonly created_ms: number;
  readonly state: WebhookEventState;
  /** The signature header's value of the last delivery (null before any). */
  readonly signature: string | null;
  /** The receiver's answer to the last delivery. */
  readonly status: number | null;
  readonly deliveries: readonly WebhookDelivery[];
}

/** A fake's own record of an event: the outbox updates its delivery state. */
export interface OutboxEvent extends WebhookEventView {
  state: WebhookEventState;
  signature: string | null;
  status: number | null;
  deliveries: WebhookDelivery[];
}

export interface WebhookEndpoint {
  readonly url: string;
  /** The key signatures are made with. */
  readonly secret: string;
  /** Headers added to every POST to this endpoint. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The options of a fake processor that say where and how its webhook events are sent. */
export interface WebhookOptions {
  /** Where events go at first (none: nowhere until setWebhookEndpoint). */
  readonly webhook_url?: string;
  /** The endpoint's signing secret. */
  readonly webhook_secret?: string;
  /** Delivery attempts per event (first one included), 1–10. Default 3. */
  readonly webhook_attempts?: number;
  /** Pause between attempts, up to 10 s. Default 25 ms. */
  readonly webhook_retry_delay_ms?: number;
  /** Of each attempt, up to 30 s. Default 2 s. */
  readonly webhook_timeout_ms?: number;
  /** Start with events held (see holdEvents). */
  readonly hold_events?: boolean;
}

/** Which events releaseHeldEvents sends: the held ones as made, reversed, or exactly these ids. */
export type ReleaseOrder = 'as_created' | 'reversed' | readonly string[];

export interface WebhookOutboxOptions<E extends OutboxEvent> {
  /** How error messages begin, e.g. "fake checkout". */
  readonly name: string;
  /** Every event the fake made, oldest first: the fake's own list, which it adds to and bounds. */
  readonly events: readonly E[];
  /** The fake's options. */
  readonly settings: WebhookOptions;
  /** The signature header of a body, keyed with the endpoint's secret (made at each attempt). */
  readonly sign: (raw_body: string, secret: string) => string;
  /** The header that carries it, in lower case. */
  readonly signature_header: string;
  /** The other headers of every POST (content-type, user-agent, …). */
  readonly headers: Readonly<Record<string, string>>;
  /** Held events kept at most (the oldest are dropped beyond); unbounded when absent. */
  readonly max_held_events?: number;
  /** Event ids releaseHeldEvents takes at most in one call; unbounded when absent. */
  readonly max_released_ids?: number;
  /** The longest waitForEvent may wait, whatever it is asked. */
  readonly wait_max_ms: number;
}

export interface WebhookOutbox<E extends OutboxEvent> {
  /** Where events go now; null: nowhere (events are then 'no_endpoint'). */
  readonly endpoint: WebhookEndpoint | null;
  setEndpoint(endpoint: WebhookEndpoint | null): void;
  /** Sends (or holds) events in order; resolves when their deliveries are over. */
  publish(created: readonly E[]): Promise<void>;
  /** While on, new events are kept (state 'held') instead of sent. */
  holdEvents(on: boolean): void;
  /** Sends held events, or exactly the listed ones (any event, held or not, any number of times); resolves when those deliveries are over. */
  releaseHeldEvents(order: ReleaseOrder): Promise<void>;
  /** Sends an event again, once, as it was (signed anew); resolves with the receiver's status (null: unreachable). */
  redeliver(event_id: string): Promise<number | null>;
  /** POSTs any body, once, with this signature header value (null: no signature header). */
  sendRaw(body: string, signature: string | null): Promise<number | null>;
  /** The first event (past or future) matching, once its delivery is over (or it is held). */
  waitForEvent(predicate: (event: E) => boolean, timeout_ms: number): Promise<E>;
  /** Stops sending (attempts under way are aborted), rejects the waits, and lets the connections go. */
  close(): Promise<void>;
}

interface PostResult {
  readonly status: number | null;
  readonly error: string | null;
  readonly signature: string;
}

interface Waiter<E> {
  readonly predicate: (event: E) => boolean;
  readonly resolve: (event: E) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** The receiver's answer is read (and dropped) up to this size, so that the connection can be reused. */
const ANSWER_MAX_BYTES = 64 * 1024;

export function createWebhookOutbox<E extends OutboxEvent>(options: WebhookOutboxOptions<E>): WebhookOutbox<E> {
  const { name, events, settings } = options;
  const attempts = Math.min(Math.max(settings.webhook_attempts ?? 3, 1), 10);
  const retry_delay_ms = Math.min(Math.max(settings.webhook_retry_delay_ms ?? 25, 0), 10_000);
  const timeout_ms = Math.min(Math.max(settings.webhook_timeout_ms ?? 2000, 1), 30_000);
  const held_events: E[] = [];
  const waiters = new Set<Waiter<E>>();
  const closing = new AbortController();
  const agent = new Agent({ connections: 4, keepAliveTimeout: 1000 });
  let endpoint: WebhookEndpoint | null = settings.webhook_url ? { url: settings.webhook_url, secret: settings.webhook_secret ?? '' } : null;
  let holding = settings.hold_events ?? false;
  let queue_tail: Promise<void> = Promise.resolve();
  let closed = false;

  function publish(created: readonly E[]): Promise<void> {
    const sending: Promise<void>[] = [];
    for (const event of created) {
      if (holding) {
        event.state = 'held';
        held_events.push(event);
        if (options.max_held_events !== undefined && held_events.length > options.max_held_events)
          held_events.splice(0, held_events.length - options.max_held_events);
        notifyWaiters();
      } else sending.push(enqueue(event, false));
    }
    return Promise.all(sending).then(() => undefined);
  }

  /** Puts the event behind those already queued: one delivery at a time, in order. */
  function enqueue(event: E, manual: boolean): Promise<void> {
    event.state = 'queued';
    const delivery = queue_tail.then(() => deliver(event, manual));
    queue_tail = delivery.catch(() => undefined);
    return delivery;
  }

  async function deliver(event: E, manual: boolean): Promise<void> {
    if (closed) return;
    if (!endpoint) {
      event.state = 'no_endpoint';
      notifyWaiters();
      return;
    }
    event.state = 'sending';
    for (let attempt = 1; attempt <= attempts && !closed; attempt += 1) {
      const result = await post(event.body, endpoint, undefined);
      recordDelivery(event, result, attempt, manual);
      if (result.status !== null && result.status >= 200 && result.status < 300) {
        event.state = 'delivered';
        notifyWaiters();
        return;
      }
      if (attempt < attempts) await sleep(retry_delay_ms, undefined, { signal: closing.signal }).catch(() => undefined);
    }
    event.state = 'failed';
    notifyWaiters();
  }

  function recordDelivery(event: E, result: PostResult, attempt: number, manual: boolean): void {
    event.deliveries.push({ attempt, status: result.status, error: result.error, signature: result.signature, at_ms: Date.now(), manual });
    event.signature = result.signature;
    event.status = result.status;
  }

  /** One POST to the endpoint. `signature_override`: undefined signs the body now, null sends no signature header, text is sent as it is. */
  async function post(body: string, to: WebhookEndpoint, signature_override: string | null | undefined): Promise<PostResult> {
    const signature = signature_override ?? options.sign(body, to.secret);
    const headers: Record<string, string> = { ...options.headers, ...to.headers };
    if (signature_override !== null) headers[options.signature_header] = signature;
    try {
      const answer = await httpRequest(to.url, {
        method: 'POST',
        body,
        headers,
        dispatcher: agent,
        signal: AbortSignal.any([closing.signal, AbortSignal.timeout(timeout_ms)]),
        headersTimeout: timeout_ms,
        bodyTimeout: timeout_ms,
      });
      await answer.body.dump({ limit: ANSWER_MAX_BYTES });
      return { status: answer.statusCode, error: null, signature };
    } catch (error) {
      return { status: null, error: error instanceof Error ? error.message : String(error), signature };
    }
  }

  function settled(event: E): boolean {
    return event.state !== 'queued' && event.state !== 'sending';
  }

  function notifyWaiters(): void {
    for (const waiter of [...waiters]) {
      const found = events.find((event) => settled(event) && waiter.predicate(event));
      if (found) {
        waiters.delete(waiter);
        clearTimeout(waiter.timer);
        waiter.resolve(found);
      }
    }
  }

  function eventWithId(id: string): E {
    const event = events.find((e) => e.id === id);
    if (!event) throw new Error(`${name}: no event ${id}`);
    return event;
  }

  return {
    get endpoint() {
      return endpoint;
    },
    setEndpoint(next) {
      endpoint = next;
    },
    publish,
    holdEvents(on) {
      holding = on;
    },
    releaseHeldEvents(order) {
      let chosen: E[];
      if (order === 'as_created') chosen = held_events.splice(0);
      else if (order === 'reversed') chosen = held_events.splice(0).reverse();
      else {
        if (options.max_released_ids !== undefined && order.length > options.max_released_ids)
          throw new Error(`${name}: more than ${options.max_released_ids} events to release at once`);
        chosen = order.map(eventWithId);
        for (const event of chosen) {
          const at = held_events.indexOf(event);
          if (at >= 0) held_events.splice(at, 1);
        }
      }
      return Promise.all(chosen.map((event) => enqueue(event, Array.isArray(order)))).then(() => undefined);
    },
    async redeliver(event_id) {
      const event = eventWithId(event_id);
      if (!endpoint) return null;
      const result = await post(event.body, endpoint, undefined);
      recordDelivery(event, result, event.deliveries.length + 1, true);
      return result.status;
    },
    async sendRaw(body, signature) {
      if (!endpoint) return null;
      return (await post(body, endpoint, signature)).status;
    },
    waitForEvent(predicate, timeout_ms) {
      const found = events.find((event) => settled(event) && predicate(event));
      if (found) return Promise.resolve(found);
      const bounded_ms = Math.min(Math.max(timeout_ms, 1), options.wait_max_ms);
      return new Promise<E>((resolve, reject) => {
        const waiter: Waiter<E> = {
          predicate,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(waiter);
            reject(
              new Error(
                `${name}: no matching event within ${bounded_ms} ms (events so far: ${events.map((e) => `${e.type}:${e.state}`).join(', ') || 'none'})`,
              ),
            );
          }, bounded_ms),
        };
        waiters.add(waiter);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      closing.abort();
      for (const waiter of waiters) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error(`${name} closed`));
      }
      waiters.clear();
      await agent.close();
    },
  };
}
