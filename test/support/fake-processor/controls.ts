// What a test can do with any fake payment processor, whichever processor it stands for: read the
// problems the fake found (`violations`) and the requests it received, make the next request to a
// route fail, steer the webhook events (hold, release in any order, send again, send anything,
// wait for one), and close it. Each fake's public interface extends FakeProcessorControls with
// what is its processor's own (its objects, its routes' names, its way of settling things later),
// and builds these controls from the parts that serve them: its violation log, its lists of
// requests and events, its failure queue, its webhook outbox and its server.
import type { FailureQueue, FakeFailureMode, HeldAnswers } from './failure-modes.js';
import type { LocalServer } from './local-server.js';
import type { RecordedRequestBase, Violation, ViolationLog } from './recording.js';
import type { OutboxEvent, ReleaseOrder, WebhookEventView, WebhookOutbox } from './webhook-outbox.js';

export interface FakeProcessorControls<Route extends string, Event extends WebhookEventView, Recorded extends RecordedRequestBase<Route>> {
  /** Problems found in the requests received and in the fake's own answers and events; tests assert it is empty. */
  readonly violations: readonly Violation[];
  clearViolations(): void;
  /** The requests received, oldest first (the oldest are dropped beyond the fake's max_recorded). */
  readonly requests: readonly Recorded[];
  requestsTo(route: Route): Recorded[];
  /** The events made, oldest first (likewise bounded). */
  readonly events: readonly Event[];
  /** The next request to `route` fails this way (calls queue up, one per request). */
  failNext(route: Route, mode: FakeFailureMode): void;
  /** While on, new events are kept (state 'held') instead of sent. */
  holdEvents(on: boolean): void;
  /**
   * Sends held events: in creation order (the default), reversed, or exactly the listed event ids
   * (any event, held or not, any number of times: duplicates). Resolves when those deliveries are over.
   */
  releaseHeldEvents(order?: ReleaseOrder): Promise<void>;
  /** Sends an event again, once, as it was (signed anew); resolves with the receiver's status (null: unreachable). */
  redeliver(event_id: string): Promise<number | null>;
  /** POSTs any body, once, with this value of the processor's signature header (null: no such header) to the webhook endpoint. */
  sendRaw(body: string, signature: string | null): Promise<number | null>;
  /** The first event (past or future) matching, once its delivery is over (or it is held); rejects after timeout_ms (default 5 s). */
  waitForEvent(predicate: (event: Event) => boolean, timeout_ms?: number): Promise<Event>;
  /** Stops the fake: nothing more is sent, waits are rejected, every connection is cut. Once; later calls do nothing. */
  close(): Promise<void>;
}

export interface ControlParts<Route extends string, Event extends OutboxEvent, Recorded extends RecordedRequestBase<Route>> {
  readonly violations: ViolationLog;
  /** The fake's own lists, which it adds to and bounds. */
  readonly requests: readonly Recorded[];
  readonly events: readonly Event[];
  readonly failures: FailureQueue<Route>;
  readonly webhooks: WebhookOutbox<Event>;
  readonly held_answers: HeldAnswers;
  readonly server: LocalServer;
  /** Clears the fake's own timers (what it would do later on its own), first thing on close. */
  readonly stopTimers: () => void;
}

const WAIT_DEFAULT_MS = 5000;

export function createProcessorControls<Route extends string, Event extends OutboxEvent, Recorded extends RecordedRequestBase<Route>>(
  parts: ControlParts<Route, Event, Recorded>,
): FakeProcessorControls<Route, Event, Recorded> {
  const { violations, requests, failures, webhooks } = parts;
  let closed = false;
  return {
    violations: violations.violations,
    clearViolations() {
      violations.clear();
    },
    requests,
    requestsTo(route) {
      return requests.filter((r) => r.route === route);
    },
    events: parts.events,
    failNext(route, mode) {
      failures.failNext(route, mode);
    },
    holdEvents(on) {
      webhooks.holdEvents(on);
    },
    releaseHeldEvents(order = 'as_created') {
      return webhooks.releaseHeldEvents(order);
    },
    redeliver(event_id) {
      return webhooks.redeliver(event_id);
    },
    sendRaw(body, signature) {
      return webhooks.sendRaw(body, signature);
    },
    waitForEvent(predicate, timeout_ms = WAIT_DEFAULT_MS) {
      return webhooks.waitForEvent(predicate, timeout_ms);
    },
    async close() {
      if (closed) return;
      closed = true;
      parts.stopTimers();
      const webhooks_closed = webhooks.close();
      parts.held_answers.destroyAll();
      await parts.server.close();
      await webhooks_closed;
    },
  };
}
