// The gateway's Prometheus metrics (prom-client), served at GET /metrics to the operator's
// bearer token (decisions.md §15, docs/operations.md). One registry per running gateway, passed
// explicitly: two gateways in one process (the tests) never mix their counts, and nothing is
// global. Counters and histograms are this instance's; the backlog gauges read the shared
// database when scraped, so every instance reports the same backlog. Calls to processors are
// counted by connector and gateway as each gateway's connector makes them: main.ts passes
// observeProcessorCall to ProcessorHttp, whose labelled views (connectors/registry.ts) report
// every exchange; processors' webhooks are counted by the route that receives them.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from './domain/clock.js';
import { type ProcessorCallLabels, type ProcessorExchange, timedOut } from './outbound/processor-http.js';
import type { Store } from './store/store.js';

/** Seconds: API answers are milliseconds to a processor's time-out. */
const LATENCY_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds a notification waited past its due time: the worker's poll to the resend schedule. */
const LAG_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export class GatewayMetrics {
  readonly registry = new Registry();

  /** Every HTTP answer, by route pattern (never the raw URL: ids and tokens would explode the series), method, HTTP code and API status. */
  readonly http_requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern, method, HTTP status code and API status ("" when the answer has none)',
    labelNames: ['route', 'method', 'http_status', 'api_status'] as const,
    registers: [this.registry],
  });

  readonly http_duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: "Time from a request's arrival to its answer, by route pattern and method",
    labelNames: ['route', 'method'] as const,
    buckets: LATENCY_BUCKETS_S,
    registers: [this.registry],
  });

  /** Answers that carried a transaction: its type and the status it had when answered (a later change is a notification). */
  readonly transactions = new Counter({
    name: 'paygate_transactions_total',
    help: 'Transactions answered by the API, by transaction_type and the transaction_status answered',
    labelNames: ['type', 'status'] as const,
    registers: [this.registry],
  });

  readonly notification_attempts = new Counter({
    name: 'paygate_notification_attempts_total',
    help: 'Notification delivery attempts of this instance, by outcome (delivered, refused, retry, undeliverable)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly notification_lag = new Histogram({
    name: 'paygate_notification_lag_seconds',
    help: 'How long after it fell due a notification attempt started',
    buckets: LAG_BUCKETS_S,
    registers: [this.registry],
  });

  /**
   * A v1.3 Gt-Authentication header seen again with another body within its time window: what a
   * replay of an observed header looks like (docs/security.md §3).
   */
  readonly v13_header_reuse = new Counter({
    name: 'paygate_v13_header_reuse_total',
    help: 'v1.3 requests whose Gt-Authentication header was already seen with another body',
    labelNames: ['route', 'refused'] as const,
    registers: [this.registry],
  });

  /** Requests answered 429 (docs/limits.md §3), by which limit. */
  readonly rate_limited = new Counter({
    name: 'paygate_rate_limited_total',
    help: 'Requests refused with HTTP 429, by limit (merchant or address)',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  /** API requests refused with HTTP 503 while the event loop lagged (http/load-shedding.ts). */
  readonly requests_shed = new Counter({
    name: 'paygate_requests_shed_total',
    help: 'API requests refused with HTTP 503 (status 29, Gateway busy) because the event loop lagged past PAYGATE_SHED_EVENT_LOOP_DELAY_MS',
    registers: [this.registry],
  });

  /** The event-loop delay load shedding reads (absent when shedding is off). */
  watchEventLoop(delay_ms: () => number | null): void {
    new Gauge({
      name: 'paygate_event_loop_delay_ms',
      help: 'Mean event-loop delay of this process over the last second, as load shedding reads it (PAYGATE_SHED_EVENT_LOOP_DELAY_MS)',
      registers: [this.registry],
      collect() {
        const now = delay_ms();
        if (now !== null) this.set(now);
      },
    });
  }

  /**
   * Every request sent to a processor, by what came of it: the HTTP answer's class (2xx to 5xx),
   * or no answer (timeout, network: refused, reset, unreachable, an answer too large).
   * gateway_id is bounded by the gateways configured.
   */
  readonly processor_requests = new Counter({
    name: 'paygate_processor_requests_total',
    help: 'Requests sent to payment processors, by connector, gateway_id and result (2xx, 3xx, 4xx, 5xx: the answer; timeout, network: no answer)',
    labelNames: ['connector', 'gateway_id', 'result'] as const,
    registers: [this.registry],
  });

  /** The failed ones alone, for error-rate alerts. 4xx includes what processors refuse by design (Stripe answers a card decline 402). */
  readonly processor_errors = new Counter({
    name: 'paygate_processor_errors_total',
    help: 'Requests to payment processors that failed, by connector, gateway_id and kind (timeout, network, http_4xx, http_5xx)',
    labelNames: ['connector', 'gateway_id', 'kind'] as const,
    registers: [this.registry],
  });

  readonly processor_duration = new Histogram({
    name: 'paygate_processor_request_duration_seconds',
    help: 'Time from sending a request to a payment processor to its whole answer (or giving up), by connector and gateway_id',
    labelNames: ['connector', 'gateway_id'] as const,
    buckets: LATENCY_BUCKETS_S,
    registers: [this.registry],
  });

  /**
   * Processors' webhooks, by what the gateway did with them (operations/processor-webhook.ts):
   * applied, unchanged, duplicate, unmatched, ignored; refused (the signature does not verify);
   * unknown_gateway (gateway_id "" and connector "unknown" unless it names one: the URL is anyone's).
   */
  readonly processor_webhooks = new Counter({
    name: 'paygate_processor_webhooks_total',
    help: 'Processor webhooks received, by connector, gateway_id and outcome (applied, unchanged, duplicate, unmatched, ignored, refused, unknown_gateway)',
    labelNames: ['connector', 'gateway_id', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Requests a gateway's guard (outbound/processor-guard.ts) refused before sending: never sent, never counted above. */
  readonly processor_refused = new Counter({
    name: 'paygate_processor_refused_total',
    help: 'Requests to payment processors refused before sending by the gateway, by connector, gateway_id and reason (circuit_open, in_flight_limit)',
    labelNames: ['connector', 'gateway_id', 'reason'] as const,
    registers: [this.registry],
  });

  /** ProcessorHttp's observer (outbound/processor-http.ts ProcessorCallObserver). */
  readonly observeProcessorCall = (labels: ProcessorCallLabels, exchange: ProcessorExchange): void => {
    const { connector, gateway_id } = labels;
    if (exchange.kind === 'not_sent' && (exchange.code === 'ECIRCUITOPEN' || exchange.code === 'EINFLIGHTLIMIT')) {
      this.processor_refused.inc({ connector, gateway_id, reason: exchange.code === 'ECIRCUITOPEN' ? 'circuit_open' : 'in_flight_limit' });
      return;
    }
    this.processor_duration.observe({ connector, gateway_id }, exchange.duration_ms / 1000);
    if (exchange.kind === 'answer') {
      const result = `${Math.min(5, Math.max(1, Math.floor(exchange.http_status / 100)))}xx`;
      this.processor_requests.inc({ connector, gateway_id, result });
      if (exchange.http_status >= 400) this.processor_errors.inc({ connector, gateway_id, kind: `http_${result}` });
      return;
    }
    const kind = timedOut(exchange) ? 'timeout' : 'network';
    this.processor_requests.inc({ connector, gateway_id, result: kind });
    this.processor_errors.inc({ connector, gateway_id, kind });
  };

  /**
   * Each gateway's circuit breaker (0 closed, 1 half open, 2 open) and its requests in flight,
   * read from ProcessorHttp's guards when scraped.
   */
  watchProcessors(
    states: () => readonly { readonly labels: ProcessorCallLabels; readonly state: string; readonly in_flight: number }[],
  ): void {
    const BREAKER_VALUES: Readonly<Record<string, number>> = { closed: 0, half_open: 1, open: 2 };
    new Gauge({
      name: 'paygate_processor_in_flight',
      help: "Requests to a gateway's processor in flight now, by connector and gateway_id (PAYGATE_PROCESSOR_MAX_IN_FLIGHT bounds it)",
      labelNames: ['connector', 'gateway_id'] as const,
      registers: [this.registry],
      collect() {
        for (const { labels, in_flight } of states()) this.set({ connector: labels.connector, gateway_id: labels.gateway_id }, in_flight);
      },
    });
    new Gauge({
      name: 'paygate_processor_breaker_state',
      help: "A gateway's circuit breaker: 0 closed, 1 half open (one probe allowed), 2 open (requests refused at once), by connector and gateway_id",
      labelNames: ['connector', 'gateway_id'] as const,
      registers: [this.registry],
      collect() {
        for (const { labels, state } of states())
          this.set({ connector: labels.connector, gateway_id: labels.gateway_id }, BREAKER_VALUES[state] ?? 0);
      },
    });
  }

  /**
   * The request log's writer (operations/request-log.ts): rows written and entries dropped
   * (queue full or a batch not written) since start, read when scraped.
   */
  watchRequestLog(counts: () => { readonly written: number; readonly dropped: number }): void {
    new Gauge({
      name: 'paygate_request_log_entries',
      help: 'Request log entries since this instance started: written, dropped (its queue was full or a batch could not be written)',
      labelNames: ['outcome'] as const,
      registers: [this.registry],
      collect() {
        const now = counts();
        this.set({ outcome: 'written' }, now.written);
        this.set({ outcome: 'dropped' }, now.dropped);
      },
    });
  }

  /** The backlog gauges: read from the store when scraped. */
  watch(store: Store, clock: Clock): void {
    const backlog = new Gauge({
      name: 'paygate_backlog',
      help: 'Work waiting in the shared database: notifications_pending, notifications_due, due_actions (due now, not done)',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        const now = await store.backlog(clock.now_ms());
        this.set({ queue: 'notifications_pending' }, now.notifications_pending);
        this.set({ queue: 'notifications_due' }, now.notifications_due);
        this.set({ queue: 'due_actions' }, now.due_actions);
        oldest.set(now.oldest_due_notification_ms === null ? 0 : Math.max(0, (clock.now_ms() - now.oldest_due_notification_ms) / 1000));
      },
    });
    const oldest = new Gauge({
      name: 'paygate_notification_oldest_due_seconds',
      help: 'How long the longest-waiting due notification has been due (0 when none is)',
      registers: [this.registry],
    });
    void backlog;
    new Gauge({
      name: 'paygate_db_pool_connections',
      help: 'PostgreSQL pool connections of this instance: total, idle, waiting (clients queued for one); absent on the embedded store',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const use = store.poolUse();
        if (use === null) return;
        this.set({ state: 'total' }, use.total);
        this.set({ state: 'idle' }, use.idle);
        this.set({ state: 'waiting' }, use.waiting);
      },
    });
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get content_type(): string {
    return this.registry.contentType;
  }
}
