// A processor for the live rows of the benchmark (bench/live.ts): the tests' fake Checkout.com
// (test/support/checkout/fake.ts, checked against the published API description) in a process
// of its own, answering each request after `answer_delay_ms` on a timer (never a busy wait, so
// the delay costs its core nothing), as a processor answers after its own latency. SIGUSR2
// toggles hanging: every request from then on is left unanswered until the gateway gives up.
// Webhooks are not sent (no endpoint is set): the rows measure the sale's own path.
//
// The first 200 requests and answers are checked against Checkout.com's published description
// (the rest are not: see CHECKED_MAX). argv: answer_delay_ms, keep_alive_ms (how long an idle
// connection is kept, as a processor's load balancer does; default 60 s). Prints
// `listening <url>`, then on SIGTERM `violations <n>` (requests or answers that broke the
// description) and exits.
import { startFakeCheckout } from '../test/support/checkout/fake.js';
import { checkoutValidator, type CheckoutValidator } from '../test/support/checkout/spec.js';

const answer_delay_ms = Number(process.argv[2] ?? 100);
const keep_alive_ms = Number(process.argv[3] ?? 60_000);
/**
 * Requests (and their answers) checked against the description: the first ones only. The check
 * costs about 4 ms of CPU a request (JSON Schema over the description's unions), which would make
 * the fake, not the gateway, the bottleneck; what the connector sends is checked by the tests.
 */
const CHECKED_MAX = 200;
const full = checkoutValidator();
let requests_checked = 0;
let answers_checked = 0;
const validator: CheckoutValidator = {
  description: full.description,
  matchOperation: (method, path) => full.matchOperation(method, path),
  validateRequest: (request) => (requests_checked++ < CHECKED_MAX ? full.validateRequest(request) : []),
  validateResponse: (response) => (answers_checked++ < CHECKED_MAX ? full.validateResponse(response) : []),
  validateEvent: (body) => full.validateEvent(body),
  validateSchema: (name, value, as) => full.validateSchema(name, value, as),
  compileAll: (operation_keys) => full.compileAll(operation_keys),
};
let hanging = false;
const fake = await startFakeCheckout({
  answer_delay_ms,
  keep_alive_timeout_ms: keep_alive_ms,
  hanging: () => hanging,
  validator,
  payout_settle_ms: null,
  // Every sale of a run is a payment it keeps; a run at a few thousand a second for a minute fits.
  max_payments: 1_000_000,
});
process.on('SIGUSR2', () => {
  hanging = !hanging;
});
process.on('SIGTERM', () => {
  process.stdout.write(`violations ${fake.violations.length}\n`);
  void fake.close().then(() => process.exit(0));
});
process.stdout.write(`listening ${fake.url}\n`);
