import { isIP } from 'node:net';

/**
 * Which proxies in front of the service may tell it the client's address (`X-Forwarded-For`), in a
 * form Fastify's `trustProxy` takes: `false` (none: the socket's address is the client), a hop
 * count (that many proxies closest to the service), or the proxies' addresses and CIDR ranges.
 * Never "everyone": the leftmost `X-Forwarded-For` entry is whatever the client wrote.
 */
export type TrustProxy = false | number | readonly string[];

/** A hop count beyond this is a typo, or "trust everything" in disguise. */
export const MAX_TRUSTED_HOPS = 10;

const NOT_SET = new Set(['', '0', 'false', 'no', 'off']);
const TRUST_EVERYTHING = new Set(['true', 'yes', 'on', 'all', '*']);
/** proxy-addr's named ranges (Fastify resolves them), for proxies on a private network. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const HOW =
  'set a hop count, the number of proxies in front of the service (e.g. 1), or their addresses/CIDRs, comma-separated (e.g. 10.0.0.0/8,fd00::/8)';

export type TrustProxyParse = { value: TrustProxy } | { problem: string };

/** Reads `TRUST_PROXY`; a problem names the variable and never echoes the value. */
export function parseTrustProxy(raw: string | undefined): TrustProxyParse {
  const text = (raw ?? '').trim().toLowerCase();
  if (NOT_SET.has(text)) return { value: false };
  if (TRUST_EVERYTHING.has(text)) {
    return {
      problem: `TRUST_PROXY no longer trusts every X-Forwarded-For (any client could pick its own address and escape the rate limits): ${HOW}`,
    };
  }
  if (/^-?\d+$/.test(text)) {
    const hops = Number(text);
    if (hops < 1 || hops > MAX_TRUSTED_HOPS) {
      return { problem: `TRUST_PROXY as a hop count must be from 1 to ${MAX_TRUSTED_HOPS}` };
    }
    return { value: hops };
  }
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => !isTrustedProxyEntry(entry))) {
    return {
      problem: `TRUST_PROXY must be false, a hop count from 1 to ${MAX_TRUSTED_HOPS}, or IP addresses/CIDRs (IPv4 or IPv6, prefix length at least 1), comma-separated: ${HOW}`,
    };
  }
  return { value: entries };
}

/** An IP address, a CIDR with a prefix length that does not cover every address, or a named range. */
function isTrustedProxyEntry(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  const length = Number(prefix);
  return length >= 1 && length <= (version === 4 ? 32 : 128);
}
