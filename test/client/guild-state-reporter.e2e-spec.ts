import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  ChannelType,
  GatewayDispatchEvents,
  OverwriteType,
  PermissionFlagsBits as P,
  type APIGuildMember,
  type APIUser,
  type GuildBasedChannel,
  type GuildMember,
} from 'discord.js';
import {
  CHANNEL_FLAG_OBFUSCATED,
  createGuildStateReporter,
  createMembershipReporter,
  type GuildState,
  type GuildStateChannel,
  type GuildStateMember,
  type GuildStateReporter,
  type GuildStateRole,
  type GuildStateThread,
  type MembershipReporter,
  type ReporterError,
} from 'clients/bot-reporter/src';
import {
  fullStateFrom,
  reportGuildState,
  reportMembership,
} from 'clients/bot-reporter/src/discord';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { SeedChannel, SeedRole } from 'src/platform/emulator/emulator.seed';
import type { GuildStateChange } from 'src/platform/emulator/emulator.state';
import { eventually } from 'test/support/eventually';
import { DEMO_REDIRECT, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';
// examples/ has no path alias (the example bot is not part of the service): imported by path.
// eslint-disable-next-line no-restricted-imports
import { FakeGateway } from '../../examples/discord-bot/fake-gateway';

const GUILD = DEMO_IDS.community;
/** A moderator of the guild, with a member overwrite of their own: not its owner. */
const USER = DEMO_IDS.demoUser;
const SEED = structuredClone(DEMO_SEED);
const seedGuild = SEED.guilds.find((guild) => guild.id === GUILD)!;
const seedRole = (name: string): SeedRole => seedGuild.roles.find((role) => role.name === name)!;
const seedChannel = (name: string): SeedChannel =>
  seedGuild.channels.find((channel) => channel.name === name)!;
const bits = (...flags: bigint[]): string => flags.reduce((all, flag) => all | flag, 0n).toString();

// --- The gateway's dispatches, from what the emulator's gateway announces ----------------------

const roleData = (role: GuildStateRole): object => ({
  ...role,
  color: 0,
  hoist: false,
  mentionable: false,
  flags: 0,
});

const channelData = (guildId: string, channel: GuildStateChannel): object => ({
  ...channel,
  guild_id: guildId,
});

const threadData = (guildId: string, thread: GuildStateThread): object => ({
  id: thread.id,
  guild_id: guildId,
  type: thread.type,
  name: thread.name,
  parent_id: thread.parent_id,
  flags: thread.flags,
  owner_id: USER,
  message_count: 0,
  member_count: 0,
  thread_metadata: {
    archived: thread.archived,
    auto_archive_duration: 1440,
    archive_timestamp: '2026-01-01T00:00:00.000Z',
    locked: false,
  },
});

/**
 * Turns what the emulator's gateway announces (a guild-state change, the wire format's shape) back
 * into the dispatch a bot receives, and feeds it to discord.js.
 */
class Gateway {
  constructor(
    readonly fake: FakeGateway,
    private readonly users: (id: string) => APIUser,
    /** Members besides the bot's that the guild's GUILD_CREATE carries (users in voice, say). */
    private readonly others: (guildId: string) => APIGuildMember[],
  ) {}

  private member(member: GuildStateMember): APIGuildMember {
    return {
      user: this.users(member.user_id),
      roles: member.roles,
      joined_at: '2024-01-01T00:00:00.000Z',
      deaf: false,
      mute: false,
      flags: 0 as APIGuildMember['flags'],
      communication_disabled_until: member.communication_disabled_until,
    };
  }

  guildCreate(state: GuildState): object {
    return {
      id: state.id,
      name: state.name,
      icon: state.icon,
      owner_id: state.owner_id,
      unavailable: false,
      features: [],
      emojis: [],
      stickers: [],
      large: false,
      member_count: 2,
      joined_at: '2024-01-01T00:00:00.000Z',
      roles: state.roles.map(roleData),
      channels: state.channels.map((channel) => channelData(state.id, channel)),
      threads: state.threads.map((thread) => threadData(state.id, thread)),
      members: [this.member(state.bot_member), ...this.others(state.id)],
      voice_states: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  }

  /** The dispatch for one announced change, as the platform would send it to shard 0. */
  send(change: GuildStateChange): void {
    const id = change.guild_id;
    const cached = this.fake.client.guilds.cache.get(id);
    const dispatch = (event: GatewayDispatchEvents, data: object): void =>
      this.fake.dispatch(0, event, data);
    switch (change.type) {
      case 'guild_create':
        return dispatch(GatewayDispatchEvents.GuildCreate, this.guildCreate(change.guild));
      case 'guild_update':
        return dispatch(GatewayDispatchEvents.GuildUpdate, { id, ...change.guild });
      case 'guild_delete':
        return dispatch(GatewayDispatchEvents.GuildDelete, {
          id,
          ...(change.unavailable ? { unavailable: true } : {}),
        });
      case 'role_upsert':
        return dispatch(
          cached?.roles.cache.has(change.role.id)
            ? GatewayDispatchEvents.GuildRoleUpdate
            : GatewayDispatchEvents.GuildRoleCreate,
          { guild_id: id, role: roleData(change.role) },
        );
      case 'role_delete':
        return dispatch(GatewayDispatchEvents.GuildRoleDelete, {
          guild_id: id,
          role_id: change.role_id,
        });
      case 'channel_upsert':
        return dispatch(
          cached?.channels.cache.has(change.channel.id)
            ? GatewayDispatchEvents.ChannelUpdate
            : GatewayDispatchEvents.ChannelCreate,
          channelData(id, change.channel),
        );
      case 'channel_delete':
        return dispatch(GatewayDispatchEvents.ChannelDelete, {
          id: change.channel_id,
          guild_id: id,
          type: cached?.channels.cache.get(change.channel_id)?.type ?? ChannelType.GuildText,
        });
      case 'thread_upsert':
        return dispatch(
          cached?.channels.cache.has(change.thread.id)
            ? GatewayDispatchEvents.ThreadUpdate
            : GatewayDispatchEvents.ThreadCreate,
          threadData(id, change.thread),
        );
      case 'thread_delete':
        return dispatch(GatewayDispatchEvents.ThreadDelete, {
          id: change.thread_id,
          guild_id: id,
          parent_id: cached?.channels.cache.get(change.thread_id)?.parentId,
          type: ChannelType.PublicThread,
        });
      case 'thread_list_sync':
        return dispatch(GatewayDispatchEvents.ThreadListSync, {
          guild_id: id,
          ...(change.channel_ids ? { channel_ids: change.channel_ids } : {}),
          threads: change.threads.map((thread) => threadData(id, thread)),
          members: [],
        });
      case 'bot_member_update':
        return dispatch(GatewayDispatchEvents.GuildMemberUpdate, {
          guild_id: id,
          ...this.member(change.member),
        });
    }
  }
}

// --- What the service must answer, by discord.js ------------------------------------------------

/** Channel types whose implicit SEND rule keys on SEND_MESSAGES (discord-domain.md §1.4). */
const MESSAGE_CHANNELS: ReadonlySet<ChannelType> = new Set([
  ChannelType.GuildText,
  ChannelType.GuildVoice,
  ChannelType.GuildAnnouncement,
  ChannelType.GuildStageVoice,
]);
const NEEDS_SEND = P.SendTTSMessages | P.MentionEveryone | P.AttachFiles | P.EmbedLinks;

/**
 * discord.js's `permissionsFor` (overwrites only), then the rules the platform's docs describe in
 * prose and discord.js leaves to its callers (discord-domain.md §1.3): a timed-out member keeps
 * only VIEW_CHANNEL and READ_MESSAGE_HISTORY, no VIEW_CHANNEL means nothing, no SEND means none of
 * what needs it. The owner and administrators hold everything.
 */
function effective(channel: GuildBasedChannel, member: GuildMember): string {
  const overwritesOnly = channel.permissionsFor(member).bitfield;
  if (overwritesOnly & P.Administrator) return overwritesOnly.toString();
  let result = overwritesOnly;
  if (member.isCommunicationDisabled()) result &= P.ViewChannel | P.ReadMessageHistory;
  if (!(result & P.ViewChannel)) return '0';
  const send = channel.isThread()
    ? P.SendMessagesInThreads
    : MESSAGE_CHANNELS.has(channel.type)
      ? P.SendMessages
      : null;
  if (send !== null && !(result & send)) result &= ~NEEDS_SEND;
  return result.toString();
}

const obfuscated = (channel: GuildBasedChannel): boolean =>
  (channel.flags.bitfield & CHANNEL_FLAG_OBFUSCATED) !== 0;

interface Permissions {
  user: string;
  bot: string;
}

/** Each channel the guild info lists, with the user's and the bot's permissions, by discord.js. */
function expectedChannels(fake: FakeGateway): Map<string, Permissions> {
  const guild = fake.client.guilds.cache.get(GUILD)!;
  const user = guild.members.cache.get(USER)!;
  const bot = guild.members.me!;
  const listed = new Map<string, Permissions>();
  const channels = [...guild.channels.cache.values()];
  // Channels the bot can view (the platform obfuscates the others, and the guild info leaves
  // them out); then active threads under one of those.
  for (const channel of channels) {
    if (channel.isThread() || obfuscated(channel)) continue;
    listed.set(channel.id, { user: effective(channel, user), bot: effective(channel, bot) });
  }
  for (const channel of channels) {
    if (!channel.isThread() || channel.archived === true) continue;
    if (channel.parentId === null || !listed.has(channel.parentId)) continue;
    listed.set(channel.id, { user: effective(channel, user), bot: effective(channel, bot) });
  }
  return listed;
}

/**
 * A bot on discord.js (fed the emulator's gateway through discord.js's own dispatch handling),
 * with the example's wiring and both reporters, reporting to the service; then what a user sees.
 */
describe('the guild-state reporter, from discord.js to the guild info (clients/bot-reporter)', () => {
  const platform = useEmulator(SEED);
  let app: TestApp;
  /** The user's login session, with `guilds.members.read`: their member is read with their token. */
  let login: string;
  let membership: MembershipReporter;
  let guildState: GuildStateReporter;
  let gateway: Gateway;
  const errors: ReporterError[] = [];

  const guildInfo = async (): Promise<{ body: Record<string, unknown> }> =>
    app
      .http()
      .get(`/users/@me/guilds/${GUILD}`)
      .set('Authorization', `Bearer ${login}`)
      .expect(200);

  const answered = (body: Record<string, unknown>): Map<string, Permissions> =>
    new Map(
      (body.channels as { user: string; bot: string; channel: { id: string } }[]).map((entry) => [
        entry.channel.id,
        { user: entry.user, bot: entry.bot },
      ]),
    );

  /** Bot-token calls the service made that name the guild. */
  const botCalls = (): string[] =>
    platform()
      .requests.filter((request) => request.auth === 'bot' && request.url.includes(GUILD))
      .map((request) => `${request.route} ${request.url}`);

  /** Sends what the reporters hold, once discord.js and the wiring have caught up. */
  const reported = async (): Promise<void> => {
    await nextTurn();
    await guildState.flush();
  };

  /** The guild info matches discord.js's view (the service may take a moment to read its write). */
  const expectDiscordJsView = async (step: string): Promise<void> => {
    const expected = expectedChannels(gateway.fake);
    const res = await eventually(guildInfo, (r) => isEqualMap(answered(r.body), expected));
    const guild = gateway.fake.client.guilds.cache.get(GUILD)!;
    expect([step, answered(res.body)]).toEqual([step, expected]);
    expect([
      step,
      res.body.name,
      res.body.owner_id,
      [...(res.body.bot_roles as string[])].sort(),
    ]).toEqual([
      step,
      guild.name,
      guild.ownerId,
      [...guild.members.me!.roles.cache.keys()].filter((id) => id !== GUILD).sort(),
    ]);
  };

  beforeAll(async () => {
    const emulator = platform();
    app = await createTestApp({
      env: { ...liveModeEnv(emulator), ROOT_USERS: DEMO_IDS.alice },
    });
    const rootCode = emulator.issueCode({ userId: DEMO_IDS.alice, redirectUri: DEMO_REDIRECT });
    const root = await app
      .http()
      .post('/oauth2')
      .send({ code: rootCode, redirect_uri: DEMO_REDIRECT })
      .expect(200);
    const apiToken = await app
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${root.body.token as string}`)
      .send({ name: 'bot', type: 'api', expiry: 3600 })
      .expect(201);
    const code = emulator.issueCode({
      userId: USER,
      scopes: ['identify', 'guilds', 'guilds.members.read'],
      redirectUri: DEMO_REDIRECT,
    });
    const user = await app
      .http()
      .post('/oauth2')
      .send({ code, redirect_uri: DEMO_REDIRECT })
      .expect(200);
    login = user.body.token as string;

    const options = {
      baseUrl: `http://127.0.0.1:${app.port}`,
      token: apiToken.body.token as string,
      onError: (error: ReporterError) => errors.push(error),
    };
    membership = createMembershipReporter(options);
    const fake = await FakeGateway.connect(1, (client) => {
      guildState = createGuildStateReporter({ ...options, fullState: fullStateFrom(client) });
      reportMembership(client, membership);
      reportGuildState(client, guildState);
    });
    gateway = new Gateway(
      fake,
      (id) => emulator.state.user(id)!,
      (guildId) => {
        const guild = emulator.state.guild(guildId)!;
        const member = emulator.state.member(guild, USER);
        return member ? [emulator.state.memberObject(member)] : [];
      },
    );
    emulator.state.onGuildState((change) => gateway.send(change));
  });

  afterAll(async () => {
    await gateway?.fake.destroy();
    await Promise.allSettled([membership?.close(), guildState?.close()]);
    await app?.close();
  });

  it("answers the guild from the bot's state as discord.js holds it, with no bot-token call", async () => {
    const emulator = platform();
    const guildIds = emulator.state.botGuildIds();
    gateway.fake.ready(0, emulator.state.user(DEMO_IDS.bot)!, guildIds);
    for (const id of guildIds) {
      gateway.fake.dispatch(
        0,
        GatewayDispatchEvents.GuildCreate,
        gateway.guildCreate(emulator.state.gatewayGuildState(id)),
      );
    }
    const status = await eventually(
      () => membership.status(),
      (s) => s.live,
    );
    expect(status).toMatchObject({ live: true, guilds: guildIds.length });
    await reported();

    await expectDiscordJsView('at start');
    // The channel the bot cannot view came obfuscated; the guild info leaves it out.
    const hidden = seedChannel('no-bots').id;
    expect(obfuscated(gateway.fake.client.channels.cache.get(hidden) as GuildBasedChannel)).toBe(
      true,
    );
    expect(answered((await guildInfo()).body).has(hidden)).toBe(false);
    expect(botCalls()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('follows every kind of change the gateway announces, still with no bot-token call', async () => {
    const state = platform().state;
    const community = seedChannel('Community').id;
    const events = '1100000000000000140';
    const steps: [string, () => void][] = [
      [
        'a role changed',
        () =>
          state.upsertRole(GUILD, {
            ...seedRole('Moderator'),
            permissions: bits(P.KickMembers, P.MentionEveryone, P.ManageThreads),
          }),
      ],
      [
        'a channel created, with a member overwrite',
        () =>
          state.upsertChannel(GUILD, {
            id: events,
            type: ChannelType.GuildText,
            name: 'events',
            position: 4,
            parent_id: community,
            permission_overwrites: [
              { id: GUILD, type: OverwriteType.Role, allow: '0', deny: bits(P.SendMessages) },
              {
                id: USER,
                type: OverwriteType.Member,
                allow: bits(P.SendMessages, P.EmbedLinks),
                deny: bits(P.AddReactions),
              },
            ],
          }),
      ],
      [
        "a channel's overwrites changed",
        () =>
          state.upsertChannel(GUILD, {
            ...seedChannel('general'),
            permission_overwrites: [
              {
                id: seedRole('Verified').id,
                type: OverwriteType.Role,
                allow: '0',
                deny: bits(P.ViewChannel),
              },
            ],
          }),
      ],
      [
        'a thread created',
        () =>
          state.upsertChannel(GUILD, {
            id: '1100000000000000141',
            type: ChannelType.PublicThread,
            name: 'event-thread',
            position: 0,
            parent_id: events,
          }),
      ],
      [
        'a hidden channel the bot can now view',
        () => state.upsertChannel(GUILD, { ...seedChannel('no-bots'), permission_overwrites: [] }),
      ],
      ['a channel deleted', () => state.deleteChannel(GUILD, seedChannel('off-topic').id)],
      ['the guild renamed', () => state.updateGuild(GUILD, { name: 'Renamed Community' })],
      [
        "the bot's roles changed",
        () =>
          state.addMember(GUILD, {
            ...seedGuild.members.find((member) => member.user_id === DEMO_IDS.bot)!,
            roles: [seedRole('Demo Moderation Bot').id, seedRole('Event Host').id],
          }),
      ],
      // One the bot has: it leaves the bot's roles with it.
      ['a role deleted', () => state.deleteRole(GUILD, seedRole('Event Host').id)],
    ];
    for (const [step, change] of steps) {
      change();
      await reported();
      await expectDiscordJsView(step);
    }
    expect(gateway.fake.client.guilds.cache.get(GUILD)!.name).toBe('Renamed Community');
    expect(answered((await guildInfo()).body).has(seedChannel('no-bots').id)).toBe(true);
    expect(botCalls()).toEqual([]);
    expect(errors).toEqual([]);
    expect(guildState.pending()).toBe(0);
  });
});

function isEqualMap(a: Map<string, Permissions>, b: Map<string, Permissions>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, value] of a) {
    const other = b.get(id);
    if (other === undefined || other.user !== value.user || other.bot !== value.bot) return false;
  }
  return true;
}
