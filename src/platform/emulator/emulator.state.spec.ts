import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { MAX_PENDING_CODES } from 'src/platform/emulator/emulator-oauth2';
import { EmulatorState } from 'src/platform/emulator/emulator.state';

const REDIRECT = 'http://localhost:3000/docs/oauth2-redirect.html';

function state(): { state: EmulatorState; advance: (ms: number) => void } {
  let time = 1_000_000;
  return {
    state: new EmulatorState(structuredClone(DEMO_SEED), () => time),
    advance: (ms) => (time += ms),
  };
}

describe('EmulatorState authorization codes', () => {
  it('keeps at most MAX_PENDING_CODES, dropping the oldest first', () => {
    const { state: s } = state();
    const codes = Array.from({ length: MAX_PENDING_CODES + 5 }, () =>
      s.issueCode(DEMO_IDS.demoUser, ['identify', 'guilds'], REDIRECT),
    );
    expect(s.pendingCodes).toBe(MAX_PENDING_CODES);
    expect(s.redeemCode(codes[0], REDIRECT)).toEqual({ refused: 'Invalid "code" in request.' });
    expect(s.redeemCode(codes[4], REDIRECT)).toEqual({ refused: 'Invalid "code" in request.' });
    expect(s.redeemCode(codes[5], REDIRECT)).toMatchObject({ userId: DEMO_IDS.demoUser });
    expect(s.redeemCode(codes.at(-1) ?? '', REDIRECT)).toMatchObject({ userId: DEMO_IDS.demoUser });
  });

  it('forgets expired codes as new ones are issued', () => {
    const { state: s, advance } = state();
    for (let i = 0; i < 100; i++) s.issueCode(DEMO_IDS.demoUser, ['identify'], REDIRECT);
    expect(s.pendingCodes).toBe(100);
    advance(11 * 60_000);
    const fresh = s.issueCode(DEMO_IDS.demoUser, ['identify'], REDIRECT);
    expect(s.pendingCodes).toBe(1);
    expect(s.redeemCode(fresh, REDIRECT)).toMatchObject({ userId: DEMO_IDS.demoUser });
  });
});

describe('EmulatorState guilds of a user', () => {
  const ids = (s: EmulatorState, user: string, page: { after?: string } = {}): string[] =>
    s.partialGuildsOf(user, { limit: 200, ...page }).map((guild) => guild.id);
  const joined = '2024-01-01T00:00:00.000Z';
  const newGuild = '1100000000000000400';

  it.each([
    {
      change: 'as seeded',
      apply: (): void => undefined,
      user: DEMO_IDS.demoUser,
      expected: [DEMO_IDS.community, DEMO_IDS.sandbox],
    },
    {
      change: 'a member joins a guild',
      apply: (s: EmulatorState): void =>
        s.addMember(DEMO_IDS.botLab, { user_id: DEMO_IDS.demoUser, roles: [], joined_at: joined }),
      user: DEMO_IDS.demoUser,
      expected: [DEMO_IDS.community, DEMO_IDS.sandbox, DEMO_IDS.botLab],
    },
    {
      change: 'a member leaves a guild',
      apply: (s: EmulatorState): void => s.removeMember(DEMO_IDS.community, DEMO_IDS.demoUser),
      user: DEMO_IDS.demoUser,
      expected: [DEMO_IDS.sandbox],
    },
    {
      change: 'a member changes (already there)',
      apply: (s: EmulatorState): void =>
        s.addMember(DEMO_IDS.sandbox, { user_id: DEMO_IDS.demoUser, roles: [], joined_at: joined }),
      user: DEMO_IDS.demoUser,
      expected: [DEMO_IDS.community, DEMO_IDS.sandbox],
    },
    {
      change: 'a new guild with the user among its members',
      apply: (s: EmulatorState): void =>
        s.addGuild({
          id: newGuild,
          name: 'New',
          icon: null,
          owner_id: DEMO_IDS.demoUser,
          roles: [{ id: newGuild, name: '@everyone', permissions: '0', position: 0 }],
          channels: [],
          members: [{ user_id: DEMO_IDS.demoUser, roles: [], joined_at: joined }],
        }),
      user: DEMO_IDS.demoUser,
      expected: [DEMO_IDS.community, DEMO_IDS.sandbox, newGuild],
    },
  ])(
    'lists what the user is a member of after $change, in id order',
    ({ apply, user, expected }) => {
      const { state: s } = state();
      apply(s);
      // What a scan of every guild finds: the index agrees with it.
      const scanned = [...DEMO_SEED.guilds.map((guild) => guild.id), newGuild].filter((id) => {
        const guild = s.guild(id);
        return guild !== undefined && s.member(guild, user) !== undefined;
      });
      expect(ids(s, user)).toEqual(expected);
      expect(new Set(ids(s, user))).toEqual(new Set(scanned));
    },
  );

  it('pages after an id', () => {
    const { state: s } = state();
    expect(ids(s, DEMO_IDS.demoUser, { after: DEMO_IDS.community })).toEqual([DEMO_IDS.sandbox]);
  });

  it('lists nothing for a user of no guild', () => {
    const { state: s } = state();
    expect(ids(s, '1100000000000009999')).toEqual([]);
  });
});
