import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { guildStateHash } from 'clients/bot-reporter/src/guild-state';
import { BotGuildsFeedService } from 'src/bot-reports/bot-guilds-feed.service';
import { GuildStateFeedService } from 'src/bot-reports/guild-state/guild-state-feed.service';
import { Clock } from 'src/common/time/clock';
import { AppConfig } from 'src/config/app-config';
import type { BotMembershipChange, GuildStateChange } from 'src/platform/emulator/emulator.state';
import { PlatformConnection } from 'src/platform/platform-connection';

/** The demo bot runs one shard. */
const DEMO_SHARD = 0;

/**
 * In demo mode, the emulated platform's bot reports its guilds the way a real bot does: a
 * snapshot at start, then each join and leave as the emulator's gateway would announce it, and a
 * report well within BOT_FEED_STALE_AFTER; and what it sees in them (docs/guild-state.md): each
 * guild's full state at start, then every change the emulator's gateway announces, with the
 * guild's hash, and a guild's full state again whenever the service asks for it. So demo mode runs
 * the path production runs.
 */
@Injectable()
export class DemoBotReporter implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DemoBotReporter.name);
  private readonly stops: (() => void)[] = [];
  /** The demo bot's one process: one stream for its one shard. */
  private readonly stream = { id: randomUUID(), started_at: '' };
  private seq = 0;
  private readonly announcedChanges: GuildStateChange[] = [];
  private heartbeat: NodeJS.Timeout | null = null;
  /** Reports are sent one after another, in the order the emulator announced them. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly heartbeatMs: number;
  private readonly enabled: boolean;

  constructor(
    private readonly connection: PlatformConnection,
    private readonly feed: BotGuildsFeedService,
    private readonly guildStates: GuildStateFeedService,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.heartbeatMs = (config.platform.botFeedStaleAfterSeconds * 1000) / 4;
    this.enabled = config.platform.demoBotReporter;
  }

  async onApplicationBootstrap(): Promise<void> {
    const emulator = this.connection.emulator;
    if (!emulator) return;
    if (!this.enabled) {
      // Another reporter for shard 0 would take it over without a word: say who reports instead.
      this.logger.log(
        "Demo mode: the emulator's bot does not report its guilds (DEMO_BOT_REPORTER=false); the feeds wait for a bot started against this service (the fake bot: docs/bot-developers.md)",
      );
      return;
    }
    this.stops.push(
      emulator.state.onBotMembership((change) => this.report(change)),
      emulator.state.onGuildState((change) => this.announced(change)),
    );
    const ids = emulator.state.botGuildIds();
    await this.feed.snapshot(DEMO_SHARD, {
      shard_count: 1,
      snapshot_at: this.clock.now().toISOString(),
      total: ids.length,
      guild_ids: ids,
    });
    this.stream.started_at = this.clock.now().toISOString();
    // Whole before the application serves (or a CLI command runs and closes the database).
    this.reportState(ids.map((id) => this.fullState(id)));
    await this.settled();
    this.heartbeat = setInterval(() => this.send([]), this.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Nothing more is announced, and what was is sent before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    for (const stop of this.stops) stop();
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.settled();
  }

  /**
   * Settles once every report announced so far has been applied (tests), with what it led to (a
   * guild's full state the service asked for).
   */
  async settled(): Promise<void> {
    for (;;) {
      // Changes announced together are sent from a microtask.
      await new Promise((resolve) => setImmediate(resolve));
      const queue = this.queue;
      await queue;
      if (queue === this.queue && this.announcedChanges.length === 0) return;
    }
  }

  private report({ guildId, present }: BotMembershipChange): void {
    const at = this.clock.now().toISOString();
    this.send([{ type: present ? 'join' : 'leave', guild_id: guildId, at }]);
  }

  /** What the emulator's gateway holds of a guild, as `GUILD_CREATE` brings it. */
  private fullState(guildId: string): GuildStateChange {
    const guild = this.emulatorState().gatewayGuildState(guildId);
    return { type: 'guild_create', guild_id: guildId, guild };
  }

  private emulatorState(): NonNullable<PlatformConnection['emulator']>['state'] {
    const emulator = this.connection.emulator;
    if (!emulator) throw new Error('demo mode without its emulator');
    return emulator.state;
  }

  /**
   * One emulator change may announce several reports (a role whose change hides a channel): they
   * go in one batch, so that the hash, taken once they are all applied, is checked after the last.
   */
  private announced(change: GuildStateChange): void {
    this.announcedChanges.push(change);
    if (this.announcedChanges.length > 1) return;
    queueMicrotask(() => this.reportState(this.announcedChanges.splice(0)));
  }

  /** Numbers the changes, with each guild's hash as the emulator holds it now, and sends them. */
  private reportState(changes: GuildStateChange[]): void {
    const state = this.emulatorState();
    const at = this.clock.now().toISOString();
    const reports = changes.map((change) => {
      const present = state.botGuildIds().includes(change.guild_id);
      const hash = present ? guildStateHash(state.gatewayGuildState(change.guild_id)) : undefined;
      return { ...change, seq: ++this.seq, at, hash };
    });
    this.queue = this.queue
      .then(async () => {
        const receipt = await this.guildStates.report(DEMO_SHARD, {
          stream: this.stream,
          reports,
        });
        // The service's copy differs from the emulator's (or it holds none): send it whole.
        const resync = receipt.resync.filter((id) => state.botGuildIds().includes(id));
        if (resync.length > 0) this.reportState(resync.map((id) => this.fullState(id)));
      })
      .catch((error: unknown) => {
        this.logger.warn({ reason: (error as Error).message }, 'The demo bot could not report');
      });
  }

  private send(events: { type: 'join' | 'leave'; guild_id: string; at: string }[]): void {
    this.queue = this.queue
      .then(() => this.feed.events(DEMO_SHARD, { events }))
      .catch((error: unknown) => {
        this.logger.warn({ reason: (error as Error).message }, 'The demo bot could not report');
      });
  }
}
