import { settingsLockKey } from 'src/settings/settings-lock';

describe('settingsLockKey', () => {
  it.each([['1100000000000000100'], ['1100000000000000300'], ['1'], ['18446744073709551615']])(
    'gives guild %s a stable signed 64-bit key',
    (guildId) => {
      const key = BigInt(settingsLockKey(guildId));
      expect(key >= -(2n ** 63n) && key < 2n ** 63n).toBe(true);
      expect(settingsLockKey(guildId)).toBe(settingsLockKey(guildId));
    },
  );

  it('gives different guilds different keys', () => {
    const keys = ['1', '2', '1100000000000000100', '1100000000000000101'].map(settingsLockKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('is the first 8 bytes of SHA-256("settings:<id>") read as a signed big-endian integer', () => {
    // sha256("settings:1") begins dcdbf9c940e4356e: the top bit is set, so the key is negative.
    expect(settingsLockKey('1')).toBe(BigInt.asIntN(64, 0xdcdbf9c940e4356en).toString());
  });
});
