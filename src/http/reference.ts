// The interactive API reference at /reference: Swagger UI, its files served from node_modules
// (never a CDN), over the same /openapi.json, with paygate's header, colours and favicon
// (pages/reference.ts) and a CSP of its own that allows nothing inline. Swagger UI's top bar (its
// logo, with an inline <style>, and a box to load any URL) is left out: BaseLayout. In the sandbox
// its request interceptor lets the page sign "Try it out" calls with a secret typed in the page.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { REFERENCE_FAVICON_SVG, REFERENCE_STYLE, REQUEST_INTERCEPTOR_SOURCE, referenceScript } from '../pages/reference.js';
import type { RouteDef } from './route.js';

/** Where the interactive API reference is served. */
export const REFERENCE_PATH = '/reference';

/**
 * Only the gateway's own files and calls; no inline script or style (Swagger UI's React sets
 * styles through the DOM, which the CSP allows), no framing, no form posting elsewhere.
 */
export const REFERENCE_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self'",
].join('; ');

export function registerReference(
  app: FastifyInstance,
  openapi: Record<string, unknown>,
  routes: readonly RouteDef[],
  environment: 'sandbox' | 'live',
): void {
  const signed_paths = routes.filter((route) => route.kind === 'signed').map((route) => route.url);
  void app.register(swagger, { mode: 'static', specification: { document: openapi as never } });
  void app.register(swaggerUi, {
    routePrefix: REFERENCE_PATH,
    staticCSP: REFERENCE_CSP,
    uiConfig: {
      layout: 'BaseLayout',
      docExpansion: 'list',
      deepLinking: true,
      tryItOutEnabled: false,
      // Written by Swagger UI into its initializer as this function's text: it calls the page's script.
      requestInterceptor: new Function('request', REQUEST_INTERCEPTOR_SOURCE) as <T>(request: T) => T,
    },
    theme: {
      title: 'paygate API reference',
      css: [{ filename: 'paygate.css', content: REFERENCE_STYLE }],
      js: [{ filename: 'paygate.js', content: referenceScript({ environment, signed_paths }) }],
      favicon: [{ filename: 'paygate.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(REFERENCE_FAVICON_SVG) }],
    },
  });
}
