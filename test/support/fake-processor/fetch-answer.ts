// How the fake processors' own tests (checkout/fake.test.ts, stripe/fake.test.ts) talk to a fake
// with plain fetch, no gateway and no SDK: one request, its whole answer kept as text and read as
// JSON where it is JSON, redirects not followed (a 3-D Secure page's 303 is what is tested), and a
// time limit so that a fake that never answers fails the test instead of hanging it. Also the
// polling wait those tests use for what a fake does after it has answered.

export interface FetchedAnswer {
  readonly status: number;
  readonly text: string;
  /** The body parsed as JSON; null when empty, undefined when it is not JSON. */
  readonly json: any;
  readonly headers: Headers;
}

export interface FetchRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  /** Default: give up after DEFAULT_TIMEOUT_MS. */
  readonly signal?: AbortSignal | undefined;
}

const DEFAULT_TIMEOUT_MS = 5000;
const POLL_INTERVAL_MS = 5;

export async function fetchAnswer(url: string, request: FetchRequest): Promise<FetchedAnswer> {
  const response = await fetch(url, {
    method: request.method,
    headers: request.headers,
    body: request.body ?? null,
    redirect: 'manual',
    signal: request.signal ?? AbortSignal.timeout(DEFAULT_TIMEOUT_MS),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json, headers: response.headers };
}

/** Polls a condition every POLL_INTERVAL_MS for at most timeout_ms. */
export async function waitUntil(condition: () => boolean, timeout_ms = DEFAULT_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeout_ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
