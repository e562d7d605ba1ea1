/**
 * How long an instance trusts a resolved session without reading it again: the longest a ban or a
 * revocation takes to reach a running service that cannot be told at once (no Redis).
 */
export const SESSION_CACHE_TTL_SECONDS = 30;

/**
 * What the admin CLI, a process of its own, says after a ban or revocation: without Redis its
 * eviction stays in the CLI, so a running service sees it only when its cached session expires.
 * Null when running services are told at once.
 */
export function cliReachNote(shared: boolean): string | null {
  return shared
    ? null
    : `Without REDIS_URL a running service applies this within ${SESSION_CACHE_TTL_SECONDS} s (when its session cache expires); with REDIS_URL, at once.`;
}
