import { AsyncLocalStorage } from 'node:async_hooks';
import { rateLimitSubject } from 'src/common/net/rate-limit-subject';

/** The request being handled, for everything done while handling it. */
export interface RequestContext {
  requestId: string;
  /** The client's address (as `trust proxy` reads it). */
  ip: string;
  /** The authenticated user, once the session guard has run. */
  userId?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

/** Work done outside any request (timers, the bot's reports at boot, the CLI). */
export const SERVICE_CALLER = 'service';

/**
 * Who the current request's platform calls are charged to in the shared platform buckets' queues
 * (src/platform/bucket-queue.ts): `user:<id>` once authenticated, else `ip:<address>` as the
 * per-address rate limits count it (an IPv6 client by its /64).
 */
export function currentCaller(): string {
  const store = requestContext.getStore();
  if (!store) return SERVICE_CALLER;
  return store.userId ? `user:${store.userId}` : `ip:${rateLimitSubject(store.ip)}`;
}

/** The request is authenticated: its calls are charged to the user from now on. */
export function chargeToUser(userId: string): void {
  const store = requestContext.getStore();
  if (store) store.userId = userId;
}
