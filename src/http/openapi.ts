// /openapi.json, generated from the same route declarations (and so the same schemas) that
// validate requests. Nothing here is written by hand per endpoint.
import type { RouteDef } from './route.js';

export function buildOpenApi(routes: readonly RouteDef[], server_url: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const operation: Record<string, unknown> = { summary: route.summary };
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.kind === 'signed') {
      operation.description = 'Body-signed (decisions.md §1). Answers HTTP 200 with the envelope for every logical outcome.';
      operation.requestBody = { required: true, content: { 'application/json': { schema: route.input.schema } } };
      operation.responses = { 200: { description: 'Signed answer', content: { 'application/json': { schema: route.response } } } };
    } else if (route.kind === 'header-signed') {
      operation.description = 'v1.3: signed with the Gt-Authentication header (decisions.md §2); the answer carries Gt-Authentication too. '
        + 'Answers HTTP 200 with the envelope for every logical outcome.';
      const auth = { name: 'Gt-Authentication', in: 'header', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{96}$' } };
      const schema = route.input.schema as { properties?: Record<string, unknown>; required?: string[] };
      const query = route.method === 'GET'
        ? Object.entries(schema.properties ?? {}).map(([name, property]) => ({
          name, in: 'query', required: (schema.required ?? []).includes(name), schema: property,
        }))
        : [];
      operation.parameters = [...parameters, auth, ...query];
      if (route.method !== 'GET') operation.requestBody = { required: true, content: { 'application/json': { schema: route.input.schema } } };
      operation.responses = {
        200: {
          description: 'Answer; header Gt-Authentication = sha384hex(status + timestamp + secret)',
          headers: { 'Gt-Authentication': { schema: { type: 'string' } } },
          content: { 'application/json': { schema: route.response } },
        },
      };
    } else {
      if (route.body) operation.requestBody = { required: true, content: { 'application/json': { schema: route.body } } };
      operation.responses = {
        200: route.produces === 'text/html'
          ? { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } }
          : { description: 'OK', content: { 'application/json': { schema: route.response ?? { type: 'object' } } } },
      };
    }
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'paygate', version: '0.1.0', description: 'Card, wallet, cashier-session and subscription payment API. Signing rules with test vectors: docs/signing.md; '
      + 'the contract: docs/contract/payment-api.md and docs/contract/decisions.md; status values and error codes: docs/errors.md (in the repository).' },
    servers: [{ url: server_url }],
    paths,
  };
}
