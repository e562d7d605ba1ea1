import { isIP } from 'node:net';
import { ipv6Groups, isIpv4Mapped, mappedIpv4 } from 'src/common/net/ip-address';

/**
 * The subject a client address is counted as in a per-IP bucket. An IPv6 client normally holds a
 * whole /64 and could take a fresh address per request, so it is counted by its /64 (or a wider
 * prefix: `prefixLength` 48 counts a whole site, as one customer often holds); an IPv4-mapped
 * address (`::ffff:a.b.c.d`) is the IPv4 client it stands for; a zone id is ignored.
 */
export function rateLimitSubject(ip: string, prefixLength: 16 | 32 | 48 | 64 = 64): string {
  const address = ip.split('%')[0];
  if (isIP(address) === 4) return address;
  const groups = ipv6Groups(address);
  if (!groups) return ip;
  if (isIpv4Mapped(groups)) return mappedIpv4(groups);
  return `${groups
    .slice(0, prefixLength / 16)
    .map((group) => group.toString(16))
    .join(':')}::/${prefixLength}`;
}
