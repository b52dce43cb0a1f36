// Reads the body of a request to one of the tests' local servers (the fake processors, the
// merchant receiver) as text, keeping at most a set number of bytes, so that a runaway client
// cannot fill the test process's memory. A larger body is still read to its end (the client can
// then be answered 413) but its bytes are dropped.
import type http from 'node:http';

export interface RequestBody {
  /** The body as UTF-8 text; '' when there was none or when it was too large. */
  readonly text: string;
  /** Whether the body had more than the bytes allowed. */
  readonly too_large: boolean;
}

/**
 * Resolves once the whole body is read. A request that ends in an error before its end (the
 * client went away) never resolves: there is nobody left to answer.
 */
export function readRequestBody(request: http.IncomingMessage, max_bytes: number): Promise<RequestBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size_bytes = 0;
    let too_large = false;
    request.on('data', (chunk: Buffer) => {
      size_bytes += chunk.length;
      if (size_bytes > max_bytes) too_large = true;
      else chunks.push(chunk);
    });
    request.on('end', () => resolve({ text: too_large ? '' : Buffer.concat(chunks).toString('utf8'), too_large }));
  });
}
