// Load shedding at the HTTP edge (issue 29, item 3). When this process's event loop lags (its core
// saturated), API requests are refused at once: HTTP 503, status 29 `Gateway busy`, Retry-After.
// The refusal comes before the body is read, the merchant looked up or anything reserved, so the
// merchant's client may send the very same request again (docs/limits.md §8).
//
// Why: a saturated gateway that takes every request in makes each one slower, its processors'
// answers wait behind its own lag, and a gateway's limit on requests in flight
// (PAYGATE_PROCESSOR_MAX_IN_FLIGHT) then refused sales the gateway had already recorded. Those were
// answered `error`, which is final. A 503 before anything is recorded costs almost nothing and
// loses nothing.
//
// The lag is @fastify/under-pressure's: the mean delay of a 10 ms timer over each second. Pages,
// the back office, processors' webhooks, /healthz and /metrics are never shed. A person's page
// matters more than a retryable call. A processor's webhook is retried by the processor anyway.
// The probes must answer most when the process is busiest.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import type { FlatValue } from '../domain/signing.js';
import { Status } from './envelope.js';

/** How often the lag is read; each reading is the mean over the interval before it. */
const SAMPLE_INTERVAL_MS = 1_000;

export interface SheddingOptions {
  /** Mean event-loop delay above which API requests are refused; 0 turns shedding off. */
  readonly max_event_loop_delay_ms: number;
  /** What Retry-After says. */
  readonly retry_after_s: number;
}

export interface SheddingWatch {
  /** The last reading of the event-loop delay (ms), or null before the plugin is ready. */
  event_loop_delay_ms(): number | null;
}

/** Sheds API calls while the event loop lags; null (nothing attached, nothing to watch) when turned off. */
export function attachLoadShedding(
  app: FastifyInstance,
  options: SheddingOptions,
  envelope: (status: number, description: string) => Record<string, FlatValue>,
  on_shed: () => void,
): SheddingWatch | null {
  if (options.max_event_loop_delay_ms === 0) return null;
  void app.register(underPressure, {
    maxEventLoopDelay: options.max_event_loop_delay_ms,
    sampleInterval: SAMPLE_INTERVAL_MS,
    pressureHandler: (request, response) => {
      // Not sending lets the request through; once sent, Fastify runs nothing further for it.
      if (!request.url.startsWith('/api/')) return;
      on_shed();
      void response
        .code(503)
        .header('retry-after', String(options.retry_after_s))
        .send(envelope(Status.GATEWAY_BUSY, `Gateway busy: retry in ${options.retry_after_s} s`));
    },
  });
  return { event_loop_delay_ms: () => (app.hasDecorator('memoryUsage') ? app.memoryUsage().eventLoopDelay : null) };
}
