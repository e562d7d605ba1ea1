import { ChannelType, GatewayDispatchEvents, OverwriteType } from 'discord.js';
import {
  CHANNEL_FLAG_OBFUSCATED,
  createGuildStateReporter,
  guildStateHash,
  type GuildStateBatch,
  type GuildStateReporter,
} from 'clients/bot-reporter/src';
import {
  fullStateFrom,
  guildState,
  reportGuildState,
} from 'clients/bot-reporter/src/discord-guild-state';
// The fake gateway serves the repository's tests (examples/ has no path alias).
// eslint-disable-next-line no-restricted-imports
import { BOT_USER, FakeGateway, guildCreateData } from '../../../examples/discord-bot/fake-gateway';
// eslint-disable-next-line no-restricted-imports
import { fakeService } from '../../../examples/discord-bot/fake-service';

const BOT = BOT_USER;
const USER = '1100000000000000012';
const GUILD = '1100000000000000500';
const OTHER = '1100000000000000600';
const id = (n: number): string => `11000000000000005${String(n).padStart(2, '0')}`;
const ROLE = { bot: id(1), mod: id(2) };
const CHANNEL = { category: id(10), text: id(11), hidden: id(12), voice: id(13) };
const THREAD = { active: id(20), archived: id(21) };
const VIEW = String(1n << 10n);

const member = (userId: string, roles: string[], until: string | null = null): object => ({
  user: { ...BOT, id: userId, bot: userId === BOT.id },
  roles,
  joined_at: '2024-01-01T00:00:00.000Z',
  deaf: false,
  mute: false,
  flags: 0,
  communication_disabled_until: until,
});

const thread = (threadId: string, archived = false): object => ({
  id: threadId,
  guild_id: GUILD,
  type: ChannelType.PublicThread,
  name: `thread ${threadId.slice(-2)}`,
  parent_id: CHANNEL.text,
  owner_id: USER,
  flags: 0,
  message_count: 0,
  member_count: 1,
  thread_metadata: {
    archived,
    auto_archive_duration: 1440,
    archive_timestamp: '2026-01-01T00:00:00.000Z',
    locked: false,
  },
});

const text = (overwrites: object[] = []): object => ({
  id: CHANNEL.text,
  guild_id: GUILD,
  type: ChannelType.GuildText,
  name: 'general',
  position: 3,
  parent_id: CHANNEL.category,
  flags: 0,
  permission_overwrites: overwrites,
});

/** GUILD_CREATE as the gateway sends it to a bot with the Guilds intent. */
const guildCreate = (): object => ({
  ...guildCreateData(GUILD, 2),
  name: 'Guild',
  owner_id: USER,
  roles: [
    { id: GUILD, name: '@everyone', permissions: '104324673', position: 0, managed: false },
    { id: ROLE.bot, name: 'Bot', permissions: '268446720', position: 5, managed: true },
    { id: ROLE.mod, name: 'Mod', permissions: '8192', position: 2, managed: false },
  ].map((role) => ({ color: 0, hoist: false, mentionable: false, flags: 0, ...role })),
  channels: [
    {
      id: CHANNEL.category,
      type: ChannelType.GuildCategory,
      name: 'Text',
      position: 0,
      flags: 0,
      permission_overwrites: [],
    },
    text([{ id: ROLE.mod, type: OverwriteType.Role, allow: '2048', deny: '0' }]),
    {
      // A channel the bot cannot view, as the platform obfuscates it.
      id: CHANNEL.hidden,
      type: ChannelType.GuildText,
      name: '___hidden___',
      position: 4,
      parent_id: null,
      flags: CHANNEL_FLAG_OBFUSCATED,
      permission_overwrites: [{ id: GUILD, type: OverwriteType.Role, allow: '0', deny: VIEW }],
    },
  ],
  threads: [thread(THREAD.active)],
  members: [member(BOT.id, [ROLE.bot])],
});

/** A guild the bot has just joined: nothing in it yet. */
const joined = (guildId: string): object => ({
  ...guildCreate(),
  id: guildId,
  roles: [{ id: guildId, name: '@everyone', permissions: '0', position: 0, managed: false }],
  channels: [],
  threads: [],
  members: [member(BOT.id, [])],
});

type Call = [string, ...unknown[]];

/** A reporter that records what the wiring tells it. */
function recordingReporter(calls: Call[]): GuildStateReporter {
  const record =
    (name: string) =>
    (...args: unknown[]): void => {
      // `at` defaults: the wiring never passes it.
      calls.push([name, ...args]);
    };
  return {
    guildCreate: record('guildCreate'),
    guildUpdate: record('guildUpdate'),
    guildDelete: record('guildDelete'),
    roleUpsert: record('roleUpsert'),
    roleDelete: record('roleDelete'),
    channelUpsert: record('channelUpsert'),
    channelDelete: record('channelDelete'),
    threadUpsert: record('threadUpsert'),
    threadDelete: record('threadDelete'),
    threadListSync: record('threadListSync'),
    botMemberUpdate: record('botMemberUpdate'),
    disconnected: record('disconnected'),
    resumed: record('resumed'),
    hash: () => undefined,
    pending: () => 0,
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

/** Lets the wiring's deferred reads (a channel discord.js added without an event) run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('reportGuildState', () => {
  let gateway: FakeGateway;
  const calls: Call[] = [];
  let detach: () => void;

  beforeAll(async () => {
    gateway = await FakeGateway.connect(1, (client) => {
      detach = reportGuildState(client, recordingReporter(calls));
    });
  });
  afterAll(async () => {
    detach();
    await gateway.destroy();
  });
  beforeEach(() => {
    calls.length = 0;
  });

  it("reports each guild whole when it arrives, as discord.js's cache holds it", () => {
    gateway.ready(0, BOT, [GUILD]);
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, guildCreate());
    expect(calls).toEqual([
      ['resumed', 0],
      [
        'guildCreate',
        0,
        {
          id: GUILD,
          name: 'Guild',
          icon: null,
          owner_id: USER,
          roles: [
            { id: GUILD, name: '@everyone', permissions: '104324673', position: 0, managed: false },
            { id: ROLE.bot, name: 'Bot', permissions: '268446720', position: 5, managed: true },
            { id: ROLE.mod, name: 'Mod', permissions: '8192', position: 2, managed: false },
          ],
          channels: [
            {
              id: CHANNEL.category,
              type: ChannelType.GuildCategory,
              name: 'Text',
              position: 0,
              parent_id: null,
              flags: 0,
              permission_overwrites: [],
            },
            {
              id: CHANNEL.text,
              type: ChannelType.GuildText,
              name: 'general',
              position: 3,
              parent_id: CHANNEL.category,
              flags: 0,
              permission_overwrites: [{ id: ROLE.mod, type: 0, allow: '2048', deny: '0' }],
            },
            {
              id: CHANNEL.hidden,
              type: ChannelType.GuildText,
              name: '___hidden___',
              position: 4,
              parent_id: null,
              flags: CHANNEL_FLAG_OBFUSCATED,
              permission_overwrites: [{ id: GUILD, type: 0, allow: '0', deny: VIEW }],
            },
          ],
          threads: [
            {
              id: THREAD.active,
              type: ChannelType.PublicThread,
              name: 'thread 20',
              parent_id: CHANNEL.text,
              flags: 0,
              archived: false,
            },
          ],
          // Without @everyone, which discord.js lists among a member's roles.
          bot_member: { user_id: BOT.id, roles: [ROLE.bot], communication_disabled_until: null },
        },
      ],
    ]);
  });

  it.each([
    [
      'GUILD_UPDATE',
      GatewayDispatchEvents.GuildUpdate,
      { ...guildCreate(), name: 'Renamed', icon: 'a_1f' },
      ['guildUpdate', 0, GUILD, { name: 'Renamed', icon: 'a_1f', owner_id: USER }],
    ],
    [
      'GUILD_ROLE_CREATE',
      GatewayDispatchEvents.GuildRoleCreate,
      {
        guild_id: GUILD,
        role: { id: id(3), name: 'New', permissions: '0', position: 1, managed: false },
      },
      [
        'roleUpsert',
        0,
        GUILD,
        { id: id(3), name: 'New', permissions: '0', position: 1, managed: false },
      ],
    ],
    [
      'GUILD_ROLE_UPDATE',
      GatewayDispatchEvents.GuildRoleUpdate,
      {
        guild_id: GUILD,
        role: { id: ROLE.mod, name: 'Mods', permissions: '8', position: 2, managed: false },
      },
      [
        'roleUpsert',
        0,
        GUILD,
        { id: ROLE.mod, name: 'Mods', permissions: '8', position: 2, managed: false },
      ],
    ],
    [
      'GUILD_ROLE_DELETE',
      GatewayDispatchEvents.GuildRoleDelete,
      { guild_id: GUILD, role_id: id(3) },
      ['roleDelete', 0, GUILD, id(3)],
    ],
    [
      'CHANNEL_CREATE',
      GatewayDispatchEvents.ChannelCreate,
      {
        id: CHANNEL.voice,
        guild_id: GUILD,
        type: ChannelType.GuildVoice,
        name: 'Voice',
        position: 5,
      },
      [
        'channelUpsert',
        0,
        GUILD,
        {
          id: CHANNEL.voice,
          type: ChannelType.GuildVoice,
          name: 'Voice',
          position: 5,
          parent_id: null,
          flags: 0,
          permission_overwrites: [],
        },
      ],
    ],
    [
      'CHANNEL_UPDATE (the bot can now view it)',
      GatewayDispatchEvents.ChannelUpdate,
      { ...text(), id: CHANNEL.hidden, name: 'secret', position: 4 },
      [
        'channelUpsert',
        0,
        GUILD,
        {
          id: CHANNEL.hidden,
          type: ChannelType.GuildText,
          name: 'secret',
          position: 4,
          parent_id: CHANNEL.category,
          flags: 0,
          permission_overwrites: [],
        },
      ],
    ],
    [
      'CHANNEL_DELETE',
      GatewayDispatchEvents.ChannelDelete,
      {
        id: CHANNEL.voice,
        guild_id: GUILD,
        type: ChannelType.GuildVoice,
        name: 'Voice',
        position: 5,
      },
      ['channelDelete', 0, GUILD, CHANNEL.voice],
    ],
    [
      'THREAD_CREATE',
      GatewayDispatchEvents.ThreadCreate,
      { ...thread(id(22)), newly_created: true },
      [
        'threadUpsert',
        0,
        GUILD,
        {
          id: id(22),
          type: ChannelType.PublicThread,
          name: 'thread 22',
          parent_id: CHANNEL.text,
          flags: 0,
          archived: false,
        },
      ],
    ],
    [
      'THREAD_UPDATE (archived)',
      GatewayDispatchEvents.ThreadUpdate,
      thread(id(22), true),
      [
        'threadUpsert',
        0,
        GUILD,
        expect.objectContaining({ id: id(22), archived: true }) as unknown,
      ],
    ],
    [
      'THREAD_DELETE',
      GatewayDispatchEvents.ThreadDelete,
      { id: id(22), guild_id: GUILD, parent_id: CHANNEL.text, type: ChannelType.PublicThread },
      ['threadDelete', 0, GUILD, id(22)],
    ],
    [
      "GUILD_MEMBER_UPDATE of the bot's own member",
      GatewayDispatchEvents.GuildMemberUpdate,
      { guild_id: GUILD, ...member(BOT.id, [ROLE.bot, ROLE.mod], '2099-01-01T00:00:00.000Z') },
      [
        'botMemberUpdate',
        0,
        GUILD,
        {
          user_id: BOT.id,
          roles: [ROLE.bot, ROLE.mod],
          communication_disabled_until: '2099-01-01T00:00:00.000Z',
        },
      ],
    ],
  ] as [string, GatewayDispatchEvents, object, Call][])(
    'reports %s',
    (_name, event, data, call) => {
      gateway.dispatch(0, event, data);
      expect(calls).toEqual([call]);
    },
  );

  it('reports THREAD_LIST_SYNC as every thread the guild then holds', () => {
    gateway.dispatch(0, GatewayDispatchEvents.ThreadListSync, {
      guild_id: GUILD,
      channel_ids: [CHANNEL.text],
      threads: [thread(id(23))],
      members: [],
    });
    expect(calls).toEqual([
      [
        'threadListSync',
        0,
        GUILD,
        [expect.objectContaining({ id: id(23), parent_id: CHANNEL.text, archived: false })],
      ],
    ]);
  });

  it('reports a thread discord.js adds without an event (one unarchived)', async () => {
    gateway.dispatch(0, GatewayDispatchEvents.ThreadUpdate, thread(THREAD.archived));
    expect(calls).toEqual([]);
    await settle();
    expect(calls).toEqual([
      ['threadUpsert', 0, GUILD, expect.objectContaining({ id: THREAD.archived, archived: false })],
    ]);
  });

  it("ignores other members' updates (the bot has no members intent anyway)", () => {
    gateway.dispatch(0, GatewayDispatchEvents.GuildMemberUpdate, {
      guild_id: GUILD,
      ...member(USER, [ROLE.mod]),
    });
    expect(calls).toEqual([]);
  });

  it('tells an outage from a removal, and distrusts every guild on a new session', () => {
    gateway.dispatch(0, GatewayDispatchEvents.GuildDelete, { id: GUILD, unavailable: true });
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, guildCreate());
    gateway.ready(0, BOT, [GUILD]);
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, guildCreate());
    gateway.dispatch(0, GatewayDispatchEvents.GuildDelete, { id: GUILD });
    expect(calls.map((call) => call.slice(0, 4))).toEqual([
      ['guildDelete', 0, GUILD, true],
      ['guildCreate', 0, expect.objectContaining({ id: GUILD })],
      ['resumed', 0],
      ['guildDelete', 0, GUILD, true],
      ['guildCreate', 0, expect.objectContaining({ id: GUILD })],
      ['guildDelete', 0, GUILD, false],
    ]);
  });
});

describe('reportGuildState with the real reporter', () => {
  it("keeps the reporter's hash equal to that of discord.js's cache, event after event", async () => {
    const service = fakeService();
    let reporter: GuildStateReporter | undefined;
    const errors: Error[] = [];
    const gateway = await FakeGateway.connect(2, (client) => {
      reporter = createGuildStateReporter({
        baseUrl: 'http://bms.test',
        token: 'ara_secret',
        fetch: service.fetch,
        fullState: fullStateFrom(client),
        onError: (error) => errors.push(error),
      });
      reportGuildState(client, reporter);
    });
    const cached = (): string =>
      guildStateHash(guildState(gateway.client.guilds.cache.get(GUILD)!)!);

    // Shard 1 is still starting when shard 0's guild arrives, and when a guild joins shard 0:
    // discord.js emits no guildCreate for the join until every shard is ready.
    gateway.ready(0, BOT, [GUILD], 2);
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, guildCreate());
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, joined(OTHER));
    gateway.ready(1, BOT, [], 2);
    expect(reporter!.hash(OTHER)).toBe(
      guildStateHash(guildState(gateway.client.guilds.cache.get(OTHER)!)!),
    );
    expect(reporter!.hash(GUILD)).toBe(cached());

    const events: [GatewayDispatchEvents, object][] = [
      [GatewayDispatchEvents.GuildRoleDelete, { guild_id: GUILD, role_id: ROLE.mod }],
      [
        GatewayDispatchEvents.ChannelUpdate,
        text([{ id: USER, type: 1, allow: '0', deny: '1024' }]),
      ],
      [GatewayDispatchEvents.ThreadCreate, thread(id(24))],
      [GatewayDispatchEvents.ThreadUpdate, thread(THREAD.archived)],
      [
        GatewayDispatchEvents.ThreadListSync,
        { guild_id: GUILD, threads: [thread(id(25))], members: [] },
      ],
      [GatewayDispatchEvents.ChannelDelete, text()],
      [GatewayDispatchEvents.GuildMemberUpdate, { guild_id: GUILD, ...member(BOT.id, []) }],
    ];
    for (const [event, data] of events) {
      gateway.dispatch(0, event, data);
      await settle();
      expect([event, reporter!.hash(GUILD)]).toEqual([event, cached()]);
    }
    const final = cached();
    await reporter!.close();
    await gateway.destroy();
    expect(errors).toEqual([]);
    const sent = service.sent
      .map(({ body }) => body as GuildStateBatch)
      .flatMap((batch) => batch.reports.filter((r) => r.guild_id === GUILD));
    expect(sent.map((report) => report.type)).toEqual([
      'guild_create',
      'role_delete',
      'channel_upsert',
      'thread_upsert',
      'thread_upsert',
      'thread_list_sync',
      'channel_delete',
      'bot_member_update',
    ]);
    expect(sent.at(-1)?.hash).toBe(final);
  });
});
