import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { proxyRequests } from '@discordjs/proxy';
import { REST } from '@discordjs/rest';

/** One request as the proxy received it, and how the proxy answered it. */
export interface ProxiedRequest {
  method: string;
  /** As sent to the proxy: `/api/v10/guilds/123?…`. */
  url: string;
  /** The credential's scheme (`Bot`, `Basic`, `Bearer`), never the credential. */
  scheme: string | null;
  /** The W3C trace context the request carried, if any. */
  traceparent: string | null;
  at: number;
  /** Set once the answer is sent. */
  status?: number;
  /** The answer's `Retry-After`, if any. */
  retryAfter?: string;
  /** Whether the answer carried any `X-RateLimit-*` header (the proxy strips them). */
  rateLimitHeaders?: boolean;
}

/** A running `@discordjs/proxy` in front of an upstream (an emulator), on a loopback port. */
export interface RestProxy {
  /** What DISCORD_REST_PROXY_URL would be: `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every request received, oldest first. */
  readonly requests: ProxiedRequest[];
  /**
   * The proxy answers the next `times` requests itself as it does when it would have to wait:
   * 429 with this `Retry-After` (null: none) and no body. For waits the real proxy computes,
   * make the upstream answer 429 instead.
   */
  refuse(times: number, retryAfter: string | null): void;
  close(): Promise<void>;
}

/**
 * Starts the REST proxy exactly as the `discordjs/proxy` container does (`proxyRequests` over a
 * REST that rejects every rate limit and never retries), with `upstream` in place of the platform.
 */
export async function startRestProxy(upstream: { apiUrl: string }): Promise<RestProxy> {
  const rest = new REST({ api: upstream.apiUrl, rejectOnRateLimit: () => true, retries: 0 });
  const handle = proxyRequests(rest);
  const requests: ProxiedRequest[] = [];
  let refusals: { remaining: number; retryAfter: string | null } | null = null;

  const server = createServer((req, res) => {
    const seen: ProxiedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      scheme: req.headers.authorization?.split(' ', 1)[0] ?? null,
      traceparent: req.headers.traceparent?.toString() ?? null,
      at: Date.now(),
    };
    requests.push(seen);
    res.on('finish', () => {
      seen.status = res.statusCode;
      const retryAfter = res.getHeader('Retry-After');
      if (retryAfter !== undefined) seen.retryAfter = String(retryAfter);
      seen.rateLimitHeaders = res.getHeaderNames().some((name) => name.startsWith('x-ratelimit'));
    });
    if (refusals && refusals.remaining > 0) {
      refusals.remaining -= 1;
      res.statusCode = 429;
      if (refusals.retryAfter !== null) res.setHeader('Retry-After', refusals.retryAfter);
      res.end();
      return;
    }
    // The handler rethrows errors it does not know after ending the answer; the container's
    // process would die of it, a test's must not.
    void Promise.resolve()
      .then(() => handle(req, res))
      .catch(() => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    refuse(times, retryAfter) {
      refusals = { remaining: times, retryAfter };
    },
    async close() {
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
