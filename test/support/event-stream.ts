import { request as httpRequest, type IncomingMessage } from 'node:http';
import { EventSource } from 'eventsource';

/** An event as an `EventSource` delivers it: its name, id and parsed data. */
export interface ReceivedEvent {
  type: string;
  id: string;
  data: unknown;
}

/**
 * A real SSE client (the `eventsource` package, the browser's `EventSource` for Node.js) on a
 * stream of the service, collecting the named events it receives. The token goes in the
 * `Authorization` header, through the client's `fetch`.
 */
export class StreamClient {
  readonly events: ReceivedEvent[] = [];
  private readonly source: EventSource;
  private waiters: (() => void)[] = [];

  constructor(
    url: string,
    types: readonly string[],
    options: { token?: string; lastEventId?: string } = {},
  ) {
    this.source = new EventSource(url, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: {
            ...init?.headers,
            ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
            // The client sends it itself when it reconnects; a first connection names it here.
            ...(options.lastEventId && !init?.headers?.['Last-Event-ID']
              ? { 'Last-Event-ID': options.lastEventId }
              : {}),
          },
        }),
    });
    for (const type of types) {
      this.source.addEventListener(type, (event: MessageEvent) => {
        const data = JSON.parse(String(event.data)) as unknown;
        this.events.push({ type, id: event.lastEventId, data });
        for (const wake of this.waiters.splice(0)) wake();
      });
    }
  }

  /** Resolves with the events once `count` have arrived (all of them so far), or rejects. */
  async next(count: number, timeoutMs = 10_000): Promise<ReceivedEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `${this.events.length} of ${count} events within ${timeoutMs} ms: ${JSON.stringify(this.events)}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.events;
  }

  close(): void {
    this.source.close();
  }
}

/** A stream read as bytes: its status, headers, text so far, and when the service ended it. */
export interface RawStream {
  response: IncomingMessage;
  text(): string;
  ended: Promise<void>;
  close(): void;
}

/** Opens a stream over a plain request, to see what is on the wire (comments, the end). */
export function openRawStream(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path, headers: { Accept: 'text/event-stream', ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        const ended = new Promise<void>((done) => {
          response.on('end', done);
          response.on('close', done);
        });
        resolve({ response, text: () => text, ended, close: () => request.destroy() });
      },
    );
    request.on('error', reject);
    request.end();
  });
}
