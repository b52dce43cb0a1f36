// The HTTP server under the tests' stand-ins for other parties (the fake processors, the merchant
// receiver): it listens on 127.0.0.1 only, reads each request's body with a size cap before
// handing the request on, keeps idle connections briefly unless told otherwise, and closes with
// every connection cut. For the fake processors, a handler
// that throws is a bug of the fake: `failuresAsViolations` records it where tests look
// (`fake.violations`) and answers 500 instead of leaving the client waiting.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readRequestBody, type RequestBody } from './read-body.js';
import type { ViolationLog } from './recording.js';

export type BodyHandler = (request: http.IncomingMessage, response: http.ServerResponse, body: RequestBody) => void | Promise<void>;

export interface LocalServer {
  /** http://127.0.0.1:PORT, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Cuts every connection (held answers included) and stops listening. */
  close(): Promise<void>;
}

export interface LocalServerOptions {
  /** 0 (the default) takes a free port; a fixed one lets a test bring a stopped server back at the same URL. */
  readonly port?: number | undefined;
  readonly body_max_bytes: number;
  /** Called once a request's body is read (a body over the cap comes as '' with too_large). */
  readonly handle: BodyHandler;
  /**
   * How long an idle connection is kept, advertised in `Keep-Alive: timeout=`. Default 1 s. A
   * client of undici's reuses a connection only while 2 s short of that (its
   * keepAliveTimeoutThreshold), so at 1 s every request of the gateway's opens a connection of
   * its own: fine for tests, not for a benchmark of a processor that keeps its connections.
   */
  readonly keep_alive_timeout_ms?: number | undefined;
}

const KEEP_ALIVE_TIMEOUT_MS = 1000;

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const server = http.createServer((request, response) => {
    void readRequestBody(request, options.body_max_bytes).then((body) => options.handle(request, response, body));
  });
  server.keepAliveTimeout = options.keep_alive_timeout_ms ?? KEEP_ALIVE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Wraps a fake processor's handler: when it throws, the error is a 'fake' violation labelled with
 * the request's method and URL, and the request is answered 500 (no body) unless an answer was
 * already begun.
 */
export function failuresAsViolations(
  violations: ViolationLog,
  handle: (request: http.IncomingMessage, response: http.ServerResponse, body: RequestBody) => Promise<void>,
): BodyHandler {
  return (request, response, body) =>
    handle(request, response, body).catch((error: unknown) => {
      violations.add('fake', `${request.method ?? ''} ${request.url ?? ''}`, [
        `the fake failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      ]);
      if (!response.headersSent) response.writeHead(500).end();
    });
}
