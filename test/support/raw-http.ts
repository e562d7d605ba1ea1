import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';

export interface RawRequest {
  method: string;
  /** Path and query string exactly as sent: nothing is encoded or normalised. */
  path: string;
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
  /** Sent instead of the body's own length: a larger value leaves the body unfinished. */
  contentLength?: number;
  /** Answer with the status and headers, then close: for streams, whose body never ends. */
  headersOnly?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
  elapsedMs: number;
}

/**
 * One request over a fresh connection with full control of what goes on the wire (duplicated query
 * parameters, any content type, truncated bodies). Rejects when no answer arrives within `timeoutMs`.
 */
export function rawRequest(port: number, req: RawRequest, timeoutMs = 5_000): Promise<RawResponse> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const body = req.body === undefined ? undefined : Buffer.from(req.body);
    const headers: OutgoingHttpHeaders = { ...req.headers };
    if (body !== undefined || req.contentLength !== undefined) {
      headers['content-length'] = req.contentLength ?? body?.length ?? 0;
    }
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent: false },
      (res) => {
        if (req.headersOnly) {
          clearTimeout(timer);
          outgoing.destroy();
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: '',
            json: undefined,
            elapsedMs: Date.now() - started,
          });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: parseJson(text),
            elapsedMs: Date.now() - started,
          });
        });
      },
    );
    const timer = setTimeout(() => {
      outgoing.destroy();
      reject(new Error(`no answer to ${req.method} ${req.path} within ${timeoutMs} ms`));
    }, timeoutMs);
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    if (body !== undefined) outgoing.write(body);
    // With a declared length above the body's, the request stays open and unfinished.
    if (req.contentLength === undefined || req.contentLength <= (body?.length ?? 0)) outgoing.end();
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
