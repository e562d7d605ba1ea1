import { ChannelType } from 'discord-api-types/v10';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';
import {
  OAuth2GrantError,
  PlatformUnauthorizedError,
  PlatformUnavailableError,
} from 'src/platform/platform.errors';
import { clientFor, DEMO_REDIRECT, useEmulator } from 'test/support/platform';
import { faultsOf } from 'test/support/emulator-faults';

/** The client against the emulator over HTTP, route by route. */
describe('PlatformClient', () => {
  const emulator = useEmulator();

  async function loginGrant(scopes = ['identify', 'guilds']): Promise<{
    access_token: string;
    refresh_token: string;
  }> {
    const code = emulator().issueCode({
      userId: DEMO_IDS.demoUser,
      scopes,
      redirectUri: DEMO_REDIRECT,
    });
    return clientFor(emulator()).exchangeCode(code, DEMO_REDIRECT);
  }

  describe('OAuth2', () => {
    it('exchanges a code for a grant with the code scopes', async () => {
      const grant = await clientFor(emulator()).exchangeCode(
        emulator().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT }),
        DEMO_REDIRECT,
      );
      expect(grant).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 604800,
        refresh_token: expect.any(String),
        scope: 'identify guilds guilds.members.read',
      });
      // The request was form-encoded with HTTP Basic client authentication.
      expect(emulator().requests.at(-1)).toMatchObject({ route: 'POST /oauth2/token' });
    });

    it.each([
      ['a reused code', true, DEMO_REDIRECT],
      ['an unknown code', false, DEMO_REDIRECT],
      ['another redirect_uri', false, 'https://evil.example/cb'],
    ])('refuses %s with invalid_grant', async (_label, reuse, redirect) => {
      const client = clientFor(emulator());
      const code = reuse
        ? emulator().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT })
        : 'no-such-code';
      if (reuse) await client.exchangeCode(code, DEMO_REDIRECT);
      const failure = client.exchangeCode(code, redirect);
      await expect(failure).rejects.toBeInstanceOf(OAuth2GrantError);
      await expect(failure).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    it('treats refused client credentials as the platform being unusable', async () => {
      const client = clientFor(emulator(), { clientSecret: 'wrong' });
      const code = emulator().issueCode({ userId: DEMO_IDS.demoUser, redirectUri: DEMO_REDIRECT });
      await expect(client.exchangeCode(code, DEMO_REDIRECT)).rejects.toBeInstanceOf(
        PlatformUnavailableError,
      );
    });

    it('refreshes a grant and retires the old tokens', async () => {
      const client = clientFor(emulator());
      const first = await loginGrant();
      const second = await client.refreshGrant(first.refresh_token);
      expect(second.access_token).not.toBe(first.access_token);
      expect((await client.getUser(second.access_token)).id).toBe(DEMO_IDS.demoUser);
      await expect(client.getUser(first.access_token)).rejects.toBeInstanceOf(
        PlatformUnauthorizedError,
      );
      await expect(client.refreshGrant(first.refresh_token)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    });

    it('revokes every token of an authorization', async () => {
      const client = clientFor(emulator());
      const grant = await loginGrant();
      await client.revokeToken(grant.refresh_token, 'refresh_token');
      await expect(client.getUser(grant.access_token)).rejects.toBeInstanceOf(
        PlatformUnauthorizedError,
      );
    });
  });

  describe('users', () => {
    it('reads the bot user with the bot token', async () => {
      const bot = await clientFor(emulator()).getBotUser();
      expect(bot).toMatchObject({ id: DEMO_IDS.bot, bot: true });
      expect(emulator().requests.at(-1)).toMatchObject({ route: 'GET /users/@me', auth: 'bot' });
    });

    it('reads the user behind an access token', async () => {
      const grant = await loginGrant();
      const user = await clientFor(emulator()).getUser(grant.access_token);
      expect(user).toMatchObject({ id: DEMO_IDS.demoUser, username: 'demo_user' });
      expect(emulator().requests.at(-1)).toMatchObject({ auth: 'bearer' });
    });

    it("lists the user's guilds with owner flags and guild-level permissions", async () => {
      const grant = await loginGrant();
      const guilds = await clientFor(emulator()).getUserGuilds(grant.access_token);
      expect(guilds.map((g) => [g.id, g.owner])).toEqual([
        [DEMO_IDS.community, false],
        [DEMO_IDS.sandbox, true],
      ]);
      // Moderator bits plus @everyone's; the owner holds every bit.
      expect(BigInt(guilds[0].permissions) & 4n).toBe(4n);
      expect(BigInt(guilds[1].permissions) & 8n).toBe(8n);
    });

    it('needs the guilds scope for the guild list', async () => {
      const grant = await loginGrant(['identify']);
      await expect(clientFor(emulator()).getUserGuilds(grant.access_token)).rejects.toBeInstanceOf(
        PlatformUnauthorizedError,
      );
    });

    it("reads the bot's guilds from an id upward", async () => {
      const client = clientFor(emulator());
      const all = await client.getBotGuildsFrom('0', 200);
      expect(all.map((g) => g.id)).toEqual([DEMO_IDS.community, DEMO_IDS.botLab]);
      // From the guild's own id: it comes first; one past it: the next guild.
      const from = await client.getBotGuildsFrom(DEMO_IDS.botLab, 1);
      expect(from.map((g) => g.id)).toEqual([DEMO_IDS.botLab]);
      const after = await client.getBotGuildsFrom((BigInt(DEMO_IDS.community) + 1n).toString(), 1);
      expect(after.map((g) => g.id)).toEqual([DEMO_IDS.botLab]);
    });
  });

  describe('guilds (bot token)', () => {
    it('reads a guild with its roles', async () => {
      const lookup = await clientFor(emulator()).getGuild(DEMO_IDS.community);
      expect(lookup.found).toBe(true);
      if (!lookup.found) return;
      expect(lookup.value).toMatchObject({ id: DEMO_IDS.community, owner_id: DEMO_IDS.alice });
      expect(lookup.value.roles).toHaveLength(13);
      expect(lookup.value.roles[0]).toMatchObject({ id: DEMO_IDS.community, name: '@everyone' });
    });

    it.each([
      ['does not exist', '999999999999999999'],
      ['does not have the bot', DEMO_IDS.sandbox],
    ])('reports a guild that %s as not found', async (_label, guildId) => {
      expect(await clientFor(emulator()).getGuild(guildId)).toEqual({
        found: false,
        missing: 'guild',
      });
      expect(await clientFor(emulator()).getGuildChannels(guildId)).toEqual({
        found: false,
        missing: 'guild',
      });
    });

    it('reads the channels, without threads, as the platform serves them', async () => {
      const lookup = await clientFor(emulator()).getGuildChannels(DEMO_IDS.community);
      if (!lookup.found) throw new Error('expected channels');
      const types = new Set(lookup.value.map((channel) => channel.type));
      expect(types).toEqual(
        new Set([
          ChannelType.GuildCategory,
          ChannelType.GuildText,
          ChannelType.GuildAnnouncement,
          ChannelType.GuildForum,
          ChannelType.GuildVoice,
          ChannelType.GuildStageVoice,
        ]),
      );
      const modLog = lookup.value.find((channel) => channel.name === 'mod-log');
      expect(modLog).toMatchObject({ parent_id: '1100000000000000131' });
      expect(modLog?.permission_overwrites).toHaveLength(4);
    });

    it('reads a member, timeouts included', async () => {
      const lookup = await clientFor(emulator()).getGuildMember(DEMO_IDS.community, DEMO_IDS.bob);
      if (!lookup.found) throw new Error('expected bob');
      expect(lookup.value).toMatchObject({
        user: { id: DEMO_IDS.bob },
        roles: ['1100000000000000109', '1100000000000000111'],
        communication_disabled_until: '2099-01-01T00:00:00.000Z',
      });
    });

    it.each([
      ['a user who is not a member', DEMO_IDS.dave, 'member'],
      ['an unknown user', '999999999999999999', 'user'],
    ])('reports %s as not found', async (_label, userId, missing) => {
      expect(await clientFor(emulator()).getGuildMember(DEMO_IDS.community, userId)).toEqual({
        found: false,
        missing,
      });
    });

    it("maps the platform's unknown-channel code", async () => {
      faultsOf(emulator()).inject('GET /guilds/:guild_id/channels', {
        kind: 'respond',
        status: 404,
        body: { message: 'Unknown Channel', code: 10003 },
      });
      expect(await clientFor(emulator()).getGuildChannels(DEMO_IDS.community)).toEqual({
        found: false,
        missing: 'channel',
      });
    });

    it('treats a refused bot token as the platform being unusable', async () => {
      const client = clientFor(emulator(), { botToken: 'wrong-token' });
      await expect(client.getGuild(DEMO_IDS.community)).rejects.toBeInstanceOf(
        PlatformUnavailableError,
      );
    });
  });

  describe('application commands', () => {
    it('replaces the commands and lists them, keeping ids of unchanged names', async () => {
      const client = clientFor(emulator());
      const first = await client.putCommands([
        { name: 'ban', description: 'Ban a member' },
        { name: 'kick', description: 'Kick a member' },
      ]);
      expect(first.map((c) => c.name)).toEqual(['ban', 'kick']);
      const second = await client.putCommands([{ name: 'ban', description: 'Ban someone' }]);
      expect(second).toHaveLength(1);
      expect(second[0].id).toBe(first[0].id);
      expect(await client.getCommands()).toEqual(second);
    });
  });
});

describe('PlatformClient paging', () => {
  const many: EmulatorSeed = {
    ...DEMO_SEED,
    guilds: Array.from({ length: 450 }, (_, i) => ({
      id: String(2_000_000_000_000_000_000n + BigInt(i)),
      name: `Guild ${i}`,
      icon: null,
      owner_id: DEMO_IDS.alice,
      roles: [],
      channels: [],
      members: [{ user_id: DEMO_IDS.bot, roles: [], joined_at: '2024-01-01T00:00:00.000Z' }],
    })),
  };
  const emulator = useEmulator(many);

  it('reads one page of the bot guild list from an id, never the whole list', async () => {
    const from = String(2_000_000_000_000_000_000n + 250n);
    const guilds = await clientFor(emulator()).getBotGuildsFrom(from, 200);
    expect(guilds).toHaveLength(200);
    expect(guilds[0].id).toBe(from);
    expect(guilds[199].id).toBe(String(2_000_000_000_000_000_000n + 449n));
    expect(emulator().countRequests('GET /users/@me/guilds')).toBe(1);
  });
});
