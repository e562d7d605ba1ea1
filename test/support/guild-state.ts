import { randomUUID } from 'node:crypto';
import type { Test } from 'supertest';
import {
  guildStateHash,
  type GuildState,
  type GuildStateReport,
} from 'clients/bot-reporter/src/guild-state';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import type { TestApp } from 'test/support/test-app';

/** Reports without their place in the stream: the stream numbers them. */
export type Unnumbered = GuildStateReport extends infer R
  ? R extends GuildStateReport
    ? Omit<R, 'seq' | 'at'> & { at?: string }
    : never
  : never;

/**
 * One reporting process's stream for one shard, as a test drives it: numbers its reports, sends
 * them with a root API token, and can send any batch as it is (gaps, duplicates, stale streams).
 */
export class TestStream {
  readonly id: string;
  readonly startedAt: string;
  private seq = 0;

  constructor(
    private readonly app: () => TestApp,
    private readonly token: string,
    readonly shardId = 0,
    startedAt: Date = new Date(),
  ) {
    this.id = randomUUID();
    this.startedAt = startedAt.toISOString();
  }

  /** Numbers the reports (from the stream's next seq) without sending them. */
  number(reports: Unnumbered[]): GuildStateReport[] {
    return reports.map((report) => ({ at: new Date().toISOString(), ...report, seq: ++this.seq }));
  }

  /** Numbers and sends the reports; the answer is checked by the caller. */
  send(reports: Unnumbered[]): Test {
    return this.raw(this.number(reports));
  }

  /** Takes back the last `count` numbers (of reports the service refused). */
  rewind(count: number): void {
    this.seq -= count;
  }

  /** Sends reports exactly as given. */
  raw(reports: GuildStateReport[]): Test {
    return this.app()
      .http()
      .post(`/internal/shards/${this.shardId}/guild-state`)
      .set('Authorization', `Bearer ${this.token}`)
      .send({ stream: { id: this.id, started_at: this.startedAt }, reports });
  }
}

/** A full state report of the guild as the emulator's gateway shows it, with its hash. */
export function guildCreate(emulator: PlatformEmulator, guildId: string): Unnumbered {
  const guild: GuildState = emulator.state.gatewayGuildState(guildId);
  return { type: 'guild_create', guild_id: guildId, guild, hash: guildStateHash(guild) };
}

/** Platform calls the bot token made about a guild's structure (not about users' members). */
export function structureCalls(emulator: PlatformEmulator, botUserId: string): string[] {
  return emulator.requests
    .filter((request) => request.auth === 'bot')
    .filter(
      (request) =>
        /^GET \/guilds\/:guild_id(\/channels|\/threads\/active)?$/.test(request.route) ||
        (request.route === 'GET /guilds/:guild_id/members/:user_id' &&
          request.url.endsWith(`/members/${botUserId}`)),
    )
    .map((request) => request.route);
}
