// For tests: a discord.js v14 Client logged in to a gateway that is this object. Packets go
// through discord.js's own path (its WebSocketManager's dispatch handler: the raw `client.ws`
// events, its packet handlers and actions, its cache and its events), as if @discordjs/ws had
// received them; nothing touches a network.

import { EventEmitter } from 'node:events';
import {
  ApplicationFlags,
  ChannelType,
  Client,
  GatewayDispatchEvents,
  GatewayIntentBits,
  type APIUser,
  type GatewayReadyDispatchData,
} from 'discord.js';

const TOKEN = 'fake-gateway-token';

/** The bot's user, as READY names it. */
export const BOT_USER: APIUser = {
  id: '1100000000000000001',
  username: 'bot',
  discriminator: '0',
  global_name: null,
  avatar: null,
  bot: true,
};

/** The part of @discordjs/ws's WebSocketManager that discord.js's manager calls. */
class FakeShardManager extends EventEmitter {
  readonly options = { token: TOKEN };
  constructor(
    private readonly shardIds: number[],
    private readonly shardCount: number,
  ) {
    super();
  }
  fetchGatewayInformation(): Promise<unknown> {
    return Promise.resolve({
      url: 'wss://gateway.invalid',
      shards: this.shardCount,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 },
    });
  }
  getShardCount(): Promise<number> {
    return Promise.resolve(this.shardCount);
  }
  getShardIds(): Promise<number[]> {
    return Promise.resolve(this.shardIds);
  }
  connect(): Promise<void> {
    return Promise.resolve();
  }
  destroy(): Promise<void> {
    return Promise.resolve();
  }
  send(): Promise<void> {
    return Promise.resolve();
  }
}

/** discord.js's manager, as far as this file reaches into it. */
interface ClientWebSocket {
  _ws: unknown;
  attachEvents(): void;
}

export class FakeGateway {
  private sequence = 0;

  private constructor(
    readonly client: Client,
    private readonly shards: FakeShardManager,
  ) {}

  /**
   * A client with the Guilds intent, logged in on `shardIds` (all `shardCount` shards by default:
   * a bot in one process; a few of them, a process of a bot split over several); `prepare` runs
   * before login (attach the wiring there, as a bot does before `client.login()`).
   */
  static async connect(
    shardCount = 1,
    prepare: (client: Client) => void = () => undefined,
    shardIds: number[] = Array.from({ length: shardCount }, (_, id) => id),
  ): Promise<FakeGateway> {
    const client = new Client({
      intents: [GatewayIntentBits.Guilds],
      shards: shardIds,
      shardCount,
    });
    const shards = new FakeShardManager(shardIds, shardCount);
    // discord.js keeps a manager whose token is the client's, and attaches its handlers to the
    // one it creates; this one is given them by hand.
    const ws = client.ws as unknown as ClientWebSocket;
    ws._ws = shards;
    ws.attachEvents();
    prepare(client);
    await client.login(TOKEN);
    return new FakeGateway(client, shards);
  }

  /** A new session: READY listing `guildIds` (unavailable until each one's GUILD_CREATE). */
  ready(shardId: number, user: APIUser, guildIds: string[], shardCount = 1): void {
    const data: GatewayReadyDispatchData = {
      v: 10,
      user,
      guilds: guildIds.map((id) => ({ id, unavailable: true })),
      session_id: `session-${shardId}-${this.sequence}`,
      resume_gateway_url: 'wss://gateway.invalid',
      shard: [shardId, shardCount],
      application: {
        id: user.id,
        flags: ApplicationFlags.GatewayGuildMembersLimited,
        flags_new: '0',
      },
    };
    this.shards.emit('ready', { data, shardId });
    this.dispatch(shardId, GatewayDispatchEvents.Ready, data);
  }

  /** One dispatch, as the shard would deliver it (discord.js reads `t` and `d`). */
  dispatch(shardId: number, event: GatewayDispatchEvents, data: unknown): void {
    this.sequence += 1;
    this.shards.emit('dispatch', { data: { op: 0, t: event, d: data, s: this.sequence }, shardId });
  }

  async destroy(): Promise<void> {
    await this.client.destroy();
  }
}

/**
 * A small guild's GUILD_CREATE as the gateway sends it to a bot with the Guilds intent: @everyone,
 * one text channel (the guild's id + 1) and the bot's member.
 */
export const guildCreateData = (id: string, memberCount: number): object => ({
  id,
  name: `Guild ${id.slice(-4)}`,
  icon: null,
  owner_id: '1100000000000000012',
  unavailable: false,
  member_count: memberCount,
  large: false,
  joined_at: '2024-01-01T00:00:00.000Z',
  features: [],
  emojis: [],
  stickers: [],
  roles: [
    {
      id,
      name: '@everyone',
      permissions: '104324673',
      position: 0,
      managed: false,
      color: 0,
      hoist: false,
      mentionable: false,
      flags: 0,
    },
  ],
  channels: [
    {
      id: String(BigInt(id) + 1n),
      type: ChannelType.GuildText,
      name: 'general',
      position: 0,
      parent_id: null,
      flags: 0,
      permission_overwrites: [],
    },
  ],
  threads: [],
  members: [
    {
      user: BOT_USER,
      roles: [],
      joined_at: '2024-01-01T00:00:00.000Z',
      deaf: false,
      mute: false,
      flags: 0,
      communication_disabled_until: null,
    },
  ],
  voice_states: [],
  presences: [],
  stage_instances: [],
  guild_scheduled_events: [],
  soundboard_sounds: [],
});
