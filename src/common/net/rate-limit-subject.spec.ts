import { rateLimitSubject } from 'src/common/net/rate-limit-subject';

describe('rateLimitSubject', () => {
  it.each<[string, string, string]>([
    ['an IPv4 address', '203.0.113.7', '203.0.113.7'],
    ['an IPv4-mapped IPv6 address', '::ffff:203.0.113.7', '203.0.113.7'],
    ['a mapped address in hex, upper case', '::FFFF:CB00:7107', '203.0.113.7'],
    ['a mapped address written in full', '0:0:0:0:0:ffff:cb00:7107', '203.0.113.7'],
    ['a mapped address with a zone id', '::ffff:198.51.100.1%eth0', '198.51.100.1'],
    ['an IPv6 address in full', '2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['another address of that /64', '2001:db8:1:2::1', '2001:db8:1:2::/64'],
    [
      'the same /64 with leading zeros, upper case',
      '2001:0DB8:0001:0002:FFFF:FFFF:FFFF:FFFF',
      '2001:db8:1:2::/64',
    ],
    ['the same /64 with a zone id', '2001:db8:1:2::1%eth0', '2001:db8:1:2::/64'],
    ['the same /64 with a dotted tail', '2001:db8:1:2:3:4:1.2.3.4', '2001:db8:1:2::/64'],
    ['the next /64', '2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['a compressed prefix', '2001:db8::', '2001:db8:0:0::/64'],
    ['the unspecified address', '::', '0:0:0:0::/64'],
    ['the loopback address', '::1', '0:0:0:0::/64'],
    ['a link-local address with a numeric zone', 'fe80::1%25', 'fe80:0:0:0::/64'],
    ['eight groups', '1:2:3:4:5:6:7:8', '1:2:3:4::/64'],
    ['something that is not an address', 'unknown', 'unknown'],
  ])('keys %s (%s) as %s', (_what, ip, subject) => {
    expect(rateLimitSubject(ip)).toBe(subject);
  });
});

describe('rateLimitSubject with a wider prefix', () => {
  it.each<[string, 16 | 32 | 48 | 64, string]>([
    ['2001:db8:1:2::1', 48, '2001:db8:1::/48'],
    ['2001:db8:1:ffff:1:2:3:4', 48, '2001:db8:1::/48'],
    ['2001:db8:2::1', 48, '2001:db8:2::/48'],
    ['2001:db8:1:2::1', 32, '2001:db8::/32'],
    ['203.0.113.7', 48, '203.0.113.7'],
    ['::ffff:203.0.113.7', 48, '203.0.113.7'],
  ])('keys %s by its /%i as %s', (ip, prefix, subject) => {
    expect(rateLimitSubject(ip, prefix)).toBe(subject);
  });
});
