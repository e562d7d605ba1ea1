import {
  ChannelType,
  GatewayDispatchEvents,
  type APIGuild,
  type APIGuildMember,
  type APIUser,
  type GatewayGuildCreateDispatchData,
} from 'discord-api-types/v10';
import { guildStateHash, type GuildState } from 'clients/bot-reporter/src/guild-state';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { signInAsRoot } from 'test/support/auth';
import { TestStream } from 'test/support/guild-state';
import { botAndAliceGuild, liveModeEnv, useEmulator } from 'test/support/platform';
import { createTestApp, type TestApp } from 'test/support/test-app';
import { guildState } from 'clients/bot-reporter/src/discord-guild-state';
// examples/ has no path alias (the example bot is not part of the service): imported by path.
// eslint-disable-next-line no-restricted-imports
import { FakeGateway } from '../../examples/discord-bot/fake-gateway';

/**
 * The reporter's wire format against what discord.js hands a bot: a GUILD_CREATE typed by
 * discord-api-types (the compiler names any field the gateway sends that is missing), made of
 * the emulator's answers (checked against Discord's OpenAPI document) with fields neither the
 * reporter nor discord-api-types knows added at every level, through discord.js's own packet
 * handling, mapped by the example bot's wiring and sent to the service's guild-state route.
 */

const GUILD = DEMO_IDS.community;
const BOT = `Bot ${DEMO_SEED.application.bot_token}`;
/** Fields a future gateway may add: on the guild, roles, channels, threads, members and users. */
const UNKNOWN = { future_field: { nested: [1, 'two'] }, future_flag: true };

type Json = Record<string, unknown>;

async function rest<T>(emulator: PlatformEmulator, path: string): Promise<T> {
  const res = await fetch(`${emulator.apiUrl}/v10${path}`, { headers: { Authorization: BOT } });
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as T;
}

/** GUILD_CREATE for the guild as the emulator holds it, with fields no one knows yet. */
async function guildCreateOf(emulator: PlatformEmulator, guildId: string): Promise<Json> {
  const guild = await rest<APIGuild>(emulator, `/guilds/${guildId}`);
  const visible = await rest<Json[]>(emulator, `/guilds/${guildId}/channels`);
  const { threads } = await rest<{ threads: Json[] }>(
    emulator,
    `/guilds/${guildId}/threads/active`,
  );
  const bot = await rest<APIGuildMember>(emulator, `/guilds/${guildId}/members/${DEMO_IDS.bot}`);
  // The gateway also sends the channels the bot cannot view, obfuscated: as the emulator's view has them.
  const view = emulator.state.gatewayGuildState(guildId);
  const channels = view.channels.map(
    (channel) =>
      visible.find((c) => c.id === channel.id) ?? {
        ...channel,
        guild_id: guildId,
        name: channel.name ?? '',
      },
  );
  const data: GatewayGuildCreateDispatchData = {
    ...guild,
    joined_at: bot.joined_at ?? '2024-01-01T00:00:00.000Z',
    large: false,
    unavailable: false,
    member_count: 4,
    voice_states: [],
    members: [bot],
    channels: channels as unknown as GatewayGuildCreateDispatchData['channels'],
    threads: threads as unknown as GatewayGuildCreateDispatchData['threads'],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
  const withUnknown = (item: object): Json => ({ ...UNKNOWN, ...item });
  return {
    ...withUnknown(data),
    features: [...data.features, 'A_FEATURE_NOT_YET_LISTED'],
    roles: data.roles.map(withUnknown),
    channels: data.channels.map(withUnknown),
    threads: data.threads.map(withUnknown),
    members: data.members.map((m) => ({ ...withUnknown(m), user: withUnknown(m.user) })),
  };
}

describe("GUILD_CREATE as discord.js hands it to a bot, to the service's guild-state route", () => {
  const platform = useEmulator();
  let app: TestApp;
  let gateway: FakeGateway;
  let stream: TestStream;

  beforeAll(async () => {
    app = await createTestApp({ env: { ...liveModeEnv(platform()), ROOT_USERS: DEMO_IDS.alice } });
    const { bot } = await signInAsRoot(app, platform());
    stream = new TestStream(() => app, bot);
    gateway = await FakeGateway.connect(1);
  });
  afterAll(async () => {
    await gateway?.destroy();
    await app?.close();
  });

  it('is mapped to the guild as the gateway holds it, fields no one knows aside, and the service keeps it as sent', async () => {
    const botUser = await rest<APIUser>(platform(), '/users/@me');
    gateway.ready(0, botUser, [GUILD]);
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, await guildCreateOf(platform(), GUILD));
    const cached = gateway.client.guilds.cache.get(GUILD);
    const state: GuildState | undefined = cached && guildState(cached);
    if (!state) throw new Error('discord.js did not cache the guild');
    const expected = platform().state.gatewayGuildState(GUILD);
    expect(sorted(state)).toEqual(sorted(expected));
    expect(guildStateHash(state)).toBe(guildStateHash(expected));

    const receipt = await stream
      .send([{ type: 'guild_create', guild_id: GUILD, guild: state, hash: guildStateHash(state) }])
      .expect(200);
    // resync [] : the service holds what it was sent, to the hash.
    expect(receipt.body).toEqual({ applied: 1, duplicates: 0, next_seq: 2, gap: null, resync: [] });
  });

  it('keeps a media channel (GUILD_MEDIA, which the OpenAPI document lacks) and flag bits no one knows yet', async () => {
    // A guild the bot joins now: discord.js takes a GUILD_CREATE's channels for a guild it has not cached.
    const joined = '1100000000000000700';
    platform().state.addGuild(botAndAliceGuild(joined));
    const payload = await guildCreateOf(platform(), joined);
    // As the reporter sends it: a channel's wire fields.
    const media = {
      id: '1100000000000000701',
      type: ChannelType.GuildMedia,
      name: 'media',
      position: 40,
      parent_id: null,
      flags: 1 << 30,
      permission_overwrites: [],
    };
    gateway.dispatch(0, GatewayDispatchEvents.GuildCreate, {
      ...payload,
      channels: [...(payload.channels as Json[]), { ...UNKNOWN, ...media, guild_id: joined }],
    });
    const state = guildState(gateway.client.guilds.cache.get(joined)!)!;
    expect(state.channels.find((channel) => channel.id === media.id)).toEqual(media);
    const receipt = await stream
      .send([{ type: 'guild_create', guild_id: joined, guild: state, hash: guildStateHash(state) }])
      .expect(200);
    expect(receipt.body).toMatchObject({ applied: 1, gap: null, resync: [] });
  });
});

/** A guild state with its lists in one order, for comparison. */
function sorted(state: GuildState): GuildState {
  const byId = <T extends { id: string }>(items: T[]): T[] =>
    [...items].sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    ...state,
    roles: byId(state.roles),
    channels: byId(state.channels).map((c) => ({
      ...c,
      permission_overwrites: byId(c.permission_overwrites),
    })),
    threads: byId(state.threads),
    bot_member: { ...state.bot_member, roles: [...state.bot_member.roles].sort() },
  };
}
