// The failures a test can make a fake payment processor suffer on its next request to a route
// (`fake.failNext(route, mode)`), the same for every fake, so that a connector's handling of
// time-outs, cut connections, server errors, unreadable answers and webhooks that overtake their
// answer is tested the same way against each processor. This module holds the queue of failures
// asked for, the answers held open by 'timeout', and the sending of a processed request's answer
// (its shape is the same in every fake) and events in the mode asked for. Failing before processing (reset_before_processing, http_500,
// http_503) stays with each fake: what a 5xx answer carries is the processor's own.
import type http from 'node:http';

export type FakeFailureMode =
  /** Processed (what it makes exists, its events are sent), but no answer: the socket is held until the client gives up. */
  | 'timeout'
  /** Processed, then the socket is destroyed without an answer. */
  | 'reset_after_processing'
  /** The socket is destroyed without processing. */
  | 'reset_before_processing'
  /** Answered 500 without processing (with the body the processor sends then, if any). */
  | 'http_500'
  /** Answered 503 without processing (with the body the processor sends then, if any). */
  | 'http_503'
  /** Processed, answered with the right status and a body that is not JSON. */
  | 'garbage'
  /** Processed; its webhook events are delivered (receiver's answers awaited) before the answer is sent. */
  | 'webhook_first';

export interface FailureQueue<R extends string> {
  /** The next request to `route` fails this way (calls queue up, one per request). */
  failNext(route: R, mode: FakeFailureMode): void;
  /** The failure the request to `route` now arriving is to suffer (taken off the queue), or null. */
  take(route: R): FakeFailureMode | null;
}

/** `name` begins error messages ("fake checkout"); at most `max_queued` failures wait per route. */
export function createFailureQueue<R extends string>(name: string, max_queued: number): FailureQueue<R> {
  const queues = new Map<R, FakeFailureMode[]>();
  return {
    failNext(route, mode) {
      const queue = queues.get(route) ?? [];
      if (queue.length >= max_queued) throw new Error(`${name}: more than ${max_queued} failures queued`);
      queue.push(mode);
      queues.set(route, queue);
    },
    take(route) {
      return queues.get(route)?.shift() ?? null;
    },
  };
}

/** Answers held open by 'timeout' until the client gives up or the fake closes. */
export interface HeldAnswers {
  hold(response: http.ServerResponse): void;
  destroyAll(): void;
}

/** Beyond `max_held` open answers, the oldest is cut (a test that forgets its client cannot pile up sockets). */
export function createHeldAnswers(max_held: number): HeldAnswers {
  const held = new Set<http.ServerResponse>();
  return {
    hold(response) {
      held.add(response);
      response.on('close', () => held.delete(response));
      if (held.size > max_held) held.values().next().value?.destroy();
    },
    destroyAll() {
      for (const response of held) response.destroy();
      held.clear();
    },
  };
}

/** What a fake is to answer a request it processed, and the webhook events the processing made. */
export interface FakeAnswer<Event> {
  readonly status: number;
  /** The JSON body; undefined for none. */
  readonly json?: unknown;
  /** The exact text to send (idempotent replays); wins over json. */
  readonly text?: string;
  readonly events: readonly Event[];
}

/** The body text of an answer (null: none). */
export function answerText(answer: FakeAnswer<unknown>): string | null {
  return answer.text ?? (answer.json === undefined ? null : JSON.stringify(answer.json));
}

export interface ProcessedRequest {
  readonly request: http.IncomingMessage;
  readonly response: http.ServerResponse;
  /** The fake's record of the request: what it would have answered is noted there when nothing is sent. */
  readonly record: { answer_body: string | null };
  /** The answer's body (null: none). */
  readonly text: string | null;
  /** The start of a garbled answer that had no body, e.g. '{"id":"pay_'. */
  readonly garbage_start: string;
  /** Writes the answer (the fake's status and headers) with this body. */
  write(text: string | null): void;
  /** Sends the answer's webhook events; resolves when their deliveries are over. */
  publish(): Promise<void>;
}

/** Sends a processed request's answer and its events as `failure` asks (null: normally, answer first). */
export async function sendProcessed(failure: FakeFailureMode | null, processed: ProcessedRequest, held: HeldAnswers): Promise<void> {
  switch (failure) {
    case 'timeout':
      processed.record.answer_body = processed.text;
      held.hold(processed.response);
      void processed.publish();
      return;
    case 'reset_after_processing':
      processed.request.socket.destroy();
      void processed.publish();
      return;
    case 'garbage':
      processed.write(garbled(processed.text, processed.garbage_start));
      void processed.publish();
      return;
    case 'webhook_first':
      await processed.publish();
      processed.write(processed.text);
      return;
    default:
      processed.write(processed.text);
      void processed.publish();
  }
}

/** The first half (at least 5 characters) of a JSON answer, then a NUL and "<": no JSON parser reads it. */
function garbled(text: string | null, start_if_none: string): string {
  return `${(text ?? start_if_none).slice(0, Math.max(5, Math.floor((text ?? '').length / 2)))}\u0000<`;
}
