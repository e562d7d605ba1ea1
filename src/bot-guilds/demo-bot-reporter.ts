import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { BotGuildsFeedService } from 'src/bot-guilds/bot-guilds-feed.service';
import { Clock } from 'src/common/time/clock';
import { AppConfig } from 'src/config/app-config';
import type { BotMembershipChange } from 'src/platform/emulator/emulator.state';
import { PlatformConnection } from 'src/platform/platform-connection';

/** The demo bot runs one shard. */
const DEMO_SHARD = 0;

/**
 * In demo mode, the emulated platform's bot reports its guilds the way a real bot does: a
 * snapshot at start, then each join and leave as the emulator's gateway would announce it, and a
 * report well within BOT_FEED_STALE_AFTER. So demo mode runs the path production runs.
 */
@Injectable()
export class DemoBotReporter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DemoBotReporter.name);
  private stop: (() => void) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  /** Reports are sent one after another, in the order the emulator announced them. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly heartbeatMs: number;

  constructor(
    private readonly connection: PlatformConnection,
    private readonly feed: BotGuildsFeedService,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.heartbeatMs = (config.platform.botFeedStaleAfterSeconds * 1000) / 4;
  }

  async onApplicationBootstrap(): Promise<void> {
    const emulator = this.connection.emulator;
    if (!emulator) return;
    this.stop = emulator.state.onBotMembership((change) => this.report(change));
    const ids = emulator.state.botGuildIds();
    await this.feed.snapshot(DEMO_SHARD, {
      shard_count: 1,
      snapshot_at: this.clock.now().toISOString(),
      total: ids.length,
      guild_ids: ids,
    });
    this.heartbeat = setInterval(() => this.send([]), this.heartbeatMs);
    this.heartbeat.unref();
  }

  onApplicationShutdown(): void {
    this.stop?.();
    if (this.heartbeat) clearInterval(this.heartbeat);
  }

  /** Settles once every report announced so far has been applied (tests). */
  settled(): Promise<unknown> {
    return this.queue;
  }

  private report({ guildId, present }: BotMembershipChange): void {
    const at = this.clock.now().toISOString();
    this.send([{ type: present ? 'join' : 'leave', guild_id: guildId, at }]);
  }

  private send(events: { type: 'join' | 'leave'; guild_id: string; at: string }[]): void {
    this.queue = this.queue
      .then(() => this.feed.events(DEMO_SHARD, { events }))
      .catch((error: unknown) => {
        this.logger.warn({ reason: (error as Error).message }, 'The demo bot could not report');
      });
  }
}
