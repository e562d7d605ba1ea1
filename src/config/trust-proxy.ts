import { isIP } from 'node:net';
import { ipv6Groups, overlapsIpv4Mapped } from 'src/common/net/ip-address';

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
/**
 * The shortest prefixes accepted: a client inside a trusted range can write any address it likes.
 * proxy-addr matches IPv4 clients against an IPv4-mapped range (`::ffff:0:0/96` is all of IPv4),
 * so any IPv6 range overlapping that space is held to the IPv4 bound, plus 96.
 */
const MIN_IPV4_PREFIX = 8;
const MIN_IPV6_PREFIX = 16;
const MIN_IPV4_MAPPED_PREFIX = 96 + MIN_IPV4_PREFIX;

/** proxy-addr's named ranges (Fastify resolves them), for proxies on a private network. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const HOW =
  'set a hop count, the number of proxies in front of the service (e.g. 1), or their addresses/CIDRs, comma-separated (e.g. 10.0.0.5,fd00:1::5)';

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
  const verdicts = new Set(entries.map(judgeEntry));
  if (verdicts.has('malformed')) {
    return {
      problem: `TRUST_PROXY must be false, a hop count from 1 to ${MAX_TRUSTED_HOPS}, or IP addresses/CIDRs (IPv4 or IPv6, prefix length at least 1), comma-separated: ${HOW}`,
    };
  }
  if (verdicts.has('zone')) {
    return {
      problem:
        'TRUST_PROXY addresses must not carry a zone id (%…): proxies are matched by address alone; list the address without it',
    };
  }
  if (verdicts.has('wide')) {
    return {
      problem: `TRUST_PROXY ranges must be narrow (prefix length IPv4 at least /${MIN_IPV4_PREFIX}, IPv6 at least /${MIN_IPV6_PREFIX}, IPv4-mapped IPv6 at least /${MIN_IPV4_MAPPED_PREFIX}): a client inside a trusted range can choose its own address, so list only the proxies' own addresses`,
    };
  }
  return { value: entries };
}

type EntryVerdict = 'ok' | 'malformed' | 'zone' | 'wide';

/** An IP address, a CIDR narrow enough to hold only proxies, or a named range. */
function judgeEntry(entry: string): EntryVerdict {
  if (NAMED_RANGES.has(entry)) return 'ok';
  const [address, prefix, ...rest] = entry.split('/');
  if (address.includes('%')) return isIP(address) === 6 ? 'zone' : 'malformed';
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return 'malformed';
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return 'malformed';
  const length = prefix === undefined ? (version === 4 ? 32 : 128) : Number(prefix);
  if (length < 1 || length > (version === 4 ? 32 : 128)) return 'malformed';
  if (version === 4) return length < MIN_IPV4_PREFIX ? 'wide' : 'ok';
  if (length < MIN_IPV6_PREFIX) return 'wide';
  const groups = ipv6Groups(address);
  if (groups && overlapsIpv4Mapped(groups, length) && length < MIN_IPV4_MAPPED_PREFIX) {
    return 'wide';
  }
  return 'ok';
}
