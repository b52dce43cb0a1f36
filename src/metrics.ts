// The gateway's Prometheus metrics (prom-client), served at GET /metrics to the operator's
// bearer token (decisions.md §15). One registry per running gateway, passed explicitly: two
// gateways in one process (the tests) never mix their counts, and nothing is global.
import { Counter, Registry } from 'prom-client';

export class GatewayMetrics {
  readonly registry = new Registry();

  /** Every HTTP answer, by route pattern (never the raw URL: ids and tokens would explode the series), method and HTTP code. */
  readonly http_requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and HTTP status code',
    labelNames: ['route', 'method', 'http_status'] as const,
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

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get content_type(): string {
    return this.registry.contentType;
  }
}
