import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';

/** The fault key matching every route. */
const ANY_ROUTE = '*';

/** A fault the emulator plays on matching requests, `times` times (default once). */
export type EmulatorFault =
  /** `shared`: a shared resource's limit (`X-RateLimit-Scope: shared`), which the platform does not count as invalid. */
  | { kind: 'rate_limit'; retryAfter: number; global?: boolean; shared?: boolean }
  | { kind: 'error'; status: number }
  /** Answers with this status and JSON body instead of the route's own answer. */
  | { kind: 'respond'; status: number; body: object }
  /** Answers normally, but only after `delayMs`. */
  | { kind: 'hang'; delayMs: number }
  /**
   * Answers normally, naming `bucket` as the route's rate-limit bucket (the platform puts several
   * routes in one bucket); with `resetAfter`, the answer spends the bucket's last request for that
   * many seconds.
   */
  | { kind: 'bucket'; bucket: string; resetAfter?: number };

/**
 * The platform misbehaving on demand: faults played by an emulator's interceptor, per route
 * template (`GET /guilds/:guild_id`) or for every route (`'*'`, a platform outage).
 */
export class EmulatorFaults {
  private readonly faults = new Map<string, { fault: EmulatorFault; remaining: number }>();

  constructor(emulator: PlatformEmulator) {
    emulator.intercept((route, reply, closing) => this.play(route, reply, closing));
  }

  /** Plays `fault` on the next `times` requests to `route`; `'*'` is every route without its own. */
  inject(route: string, fault: EmulatorFault, times = 1): void {
    this.faults.set(route, { fault, remaining: times });
  }

  clear(): void {
    this.faults.clear();
  }

  private async play(route: string, reply: FastifyReply, closing: AbortSignal): Promise<void> {
    const key = this.faults.has(route) ? route : ANY_ROUTE;
    const entry = this.faults.get(key);
    if (!entry) return;
    entry.remaining -= 1;
    if (entry.remaining <= 0) this.faults.delete(key);
    const { fault } = entry;
    switch (fault.kind) {
      case 'hang':
        await sleep(fault.delayMs, undefined, { signal: closing }).catch(() => undefined);
        return;
      case 'bucket':
        void reply.header('X-RateLimit-Bucket', fault.bucket);
        if (fault.resetAfter !== undefined) {
          void reply.headers({
            'X-RateLimit-Limit': '5',
            'X-RateLimit-Remaining': '0',
            'X-RateLimit-Reset-After': String(fault.resetAfter),
          });
        }
        return;
      case 'error':
        await reply.code(fault.status).send({ message: `${fault.status}: Server Error`, code: 0 });
        return;
      case 'respond':
        await reply.code(fault.status).send(fault.body);
        return;
      case 'rate_limit':
        await reply
          .code(429)
          .headers({
            'Retry-After': String(Math.ceil(fault.retryAfter)),
            'X-RateLimit-Limit': '5',
            'X-RateLimit-Remaining': '0',
            'X-RateLimit-Reset-After': String(fault.retryAfter),
            'X-RateLimit-Scope': fault.global ? 'global' : fault.shared ? 'shared' : 'user',
            ...(fault.global ? { 'X-RateLimit-Global': 'true' } : {}),
          })
          .send({
            message: 'You are being rate limited.',
            retry_after: fault.retryAfter,
            global: fault.global ?? false,
            code: 0,
          });
    }
  }
}

const installed = new WeakMap<PlatformEmulator, EmulatorFaults>();

/** The faults of an emulator (installed on first use). */
export function faultsOf(emulator: PlatformEmulator): EmulatorFaults {
  let faults = installed.get(emulator);
  if (!faults) {
    faults = new EmulatorFaults(emulator);
    installed.set(emulator, faults);
  }
  return faults;
}
