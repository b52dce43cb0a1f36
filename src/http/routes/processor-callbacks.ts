// What processors send to the gateway: their webhooks (POST /webhooks/{connector}/{gateway_id},
// the webhook_url a gateway is created with) and their customers back from a 3-D Secure page of
// theirs (GET /return/{trace_id}/{check}). Both only hand over to operations/: the webhook to
// processor-webhook.ts, the return to processor-return.ts. Each webhook's outcome is counted
// here, at the edge (paygate_processor_webhooks_total, docs/operations.md §2).
import type { OperationDeps } from '../../operations/deps.js';
import { receiveWebhook } from '../../operations/processor-webhook.js';
import { customerReturned } from '../../operations/processor-return.js';
import { notFoundPage } from '../../pages/not-found.js';
import type { PlainRoute } from '../route.js';

/** The URL a gateway's processor sends its webhooks to (decisions.md §13: under PUBLIC_URL). */
export function webhookUrl(public_url: string, connector: string, gateway_id: string): string {
  return `${public_url}/webhooks/${connector}/${gateway_id}`;
}

export function processorCallbackRoutes(deps: OperationDeps): PlainRoute[] {
  return [
    {
      kind: 'plain',
      method: 'POST',
      url: '/webhooks/:connector/:gateway_id',
      summary:
        "A processor's webhook for one gateway: 401 unless its signature verifies with the gateway's webhook secret, 200 for every verified event",
      produces: 'application/json',
      raw_body: true,
      async handle(request, response) {
        const { connector, gateway_id } = request.params as { connector: string; gateway_id: string };
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const outcome = await receiveWebhook(deps, connector, gateway_id, body, request.headers);
        // The URL is anyone's: an unknown gateway's id and an unknown connector's name never become labels.
        const known = outcome.kind !== 'unknown_gateway';
        deps.metrics.processor_webhooks.inc({
          connector: known || deps.connectors.definition(connector) !== null ? connector : 'unknown',
          gateway_id: known ? gateway_id : '',
          outcome: outcome.kind === 'accepted' ? outcome.outcome : outcome.kind === 'bad_signature' ? 'refused' : 'unknown_gateway',
        });
        switch (outcome.kind) {
          case 'unknown_gateway':
            return response.code(404).send({ received: false, reason: 'unknown gateway' });
          case 'bad_signature':
            return response.code(401).send({ received: false, reason: 'signature does not verify' });
          case 'accepted':
            if (outcome.acknowledgement)
              return response.code(200).type(outcome.acknowledgement.content_type).send(outcome.acknowledgement.body);
            return response.code(200).send({ received: true, outcome: outcome.outcome });
        }
      },
    },
    ...(['GET', 'POST'] as const).map((method): PlainRoute => ({
      kind: 'plain',
      method,
      url: '/return/:trace_id/:check',
      summary:
        method === 'GET'
          ? "Where a processor sends the customer after its own page (3-D Secure, PayPal's approval): the gateway asks the processor (and completes the payment where the processor needs it), then redirects to return_url"
          : "The same way back when the processor sends the customer with a form post (some of Adyen's redirects)",
      produces: 'text/html',
      async handle(request, response) {
        const { trace_id, check } = request.params as { trace_id: string; check: string };
        const query = (request.query ?? {}) as Record<string, unknown>;
        const form =
          method === 'POST' && typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
        const outcome = await customerReturned(deps, trace_id, check, { ...form, ...query });
        const headers = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' };
        if (outcome.kind === 'not_found') {
          return response
            .code(404)
            .headers(headers)
            .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
            .type('text/html; charset=utf-8')
            .send(notFoundPage());
        }
        return response.code(303).headers(headers).redirect(outcome.to, 303);
      },
    })),
  ];
}
