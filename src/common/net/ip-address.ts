import { isIP } from 'node:net';

/** The first 96 bits of an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), as groups. */
const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0xffff] as const;

/**
 * The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail read as the last two), or null
 * for anything else, including an address with a zone id (`%eth0`): strip it first if it is wanted.
 */
export function ipv6Groups(address: string): number[] | null {
  if (address.includes('%') || isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number);
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const read = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((group) => parseInt(group, 16));
  const [head, rest] = text.split('::');
  if (rest === undefined) return read(head);
  const before = read(head);
  const after = read(rest);
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/** Whether the first `bits` bits of two group lists are equal. */
export function samePrefix(a: readonly number[], b: readonly number[], bits: number): boolean {
  for (let i = 0; i * 16 < bits; i++) {
    const width = Math.min(16, bits - i * 16);
    const mask = (0xffff << (16 - width)) & 0xffff;
    if (((a[i] ?? 0) & mask) !== ((b[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** Whether IPv6 groups are an IPv4-mapped address (`::ffff:a.b.c.d`). */
export function isIpv4Mapped(groups: readonly number[]): boolean {
  return samePrefix(groups, MAPPED_PREFIX, 96);
}

/** Whether the IPv6 range `groups/prefix` and the IPv4-mapped range `::ffff:0:0/96` overlap. */
export function overlapsIpv4Mapped(groups: readonly number[], prefix: number): boolean {
  return samePrefix(groups, MAPPED_PREFIX, Math.min(prefix, 96));
}

/** The IPv4 address an IPv4-mapped IPv6 address stands for. */
export function mappedIpv4(groups: readonly number[]): string {
  return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
}
