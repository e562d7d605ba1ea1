import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type MessageEvent,
  type OnModuleInit,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import type { Observable } from 'rxjs';
import { BotEventLog } from 'src/events/bot-event-log';
import { botChanges, healthOf, type BotEvent } from 'src/events/bot-events';
import { EventBus, type BusMessage } from 'src/events/event-bus';
import {
  anonymousOwner,
  EventStreams,
  RECONNECT_DELAY_MS,
  type OpenStream,
  type StreamSocket,
} from 'src/events/event-streams';
import { ShardReportedEvent } from 'src/bot-reports/shard-stats/stats.events';
import { StatsService } from 'src/bot-reports/shard-stats/stats.service';

/**
 * How often the shards' state is compared with the last events while anyone follows it (a shard
 * falls silent without reporting); every report is compared at once too.
 */
export const BOT_HEALTH_INTERVAL_MS = 2_000;

function streamed(event: BotEvent): MessageEvent {
  return { type: event.type, id: String(event.id), data: event.data };
}

/** One stream following the bot's health: events in order, each once. */
class BotFollower {
  private lastSent = 0;
  private started = false;
  private readonly waiting: BotEvent[] = [];

  constructor(readonly stream: OpenStream) {}

  /** Starts after the opening events, which end at `lastSent`; events that came meanwhile follow. */
  start(opening: readonly MessageEvent[], lastSent: number): void {
    for (const event of opening) this.stream.send(event);
    this.lastSent = lastSent;
    this.started = true;
    this.receive(this.waiting.splice(0));
  }

  /** Messages may have been lost: the events after the last sent, or the whole state again. */
  async resync(log: BotEventLog, stats: StatsService): Promise<void> {
    if (!this.started) return;
    const missed = await log.since(this.lastSent);
    if (missed) {
      this.receive(missed);
      return;
    }
    const { seq } = await log.last();
    this.stream.send({ type: 'stats', id: String(seq), data: await stats.currentStats() });
    this.lastSent = Math.max(this.lastSent, seq);
  }

  receive(events: readonly BotEvent[]): void {
    if (!this.started) {
      this.waiting.push(...events);
      return;
    }
    for (const event of events) {
      if (event.id <= this.lastSent) continue;
      this.lastSent = event.id;
      this.stream.send(streamed(event));
    }
  }
}

/**
 * The bot health stream: shard status changes and the totals of `GET /bot-stats`. While any
 * instance has a follower, one of them (the lead) compares the shards' state with the last events
 * every `BOT_HEALTH_INTERVAL_MS` and appends what changed to the shared log, which every instance
 * hears; a stream opens with the current `GET /bot-stats`, or resumes from the log.
 */
@Injectable()
export class BotEventsService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(BotEventsService.name);
  private readonly followers = new Set<BotFollower>();
  private ticker: NodeJS.Timeout | null = null;
  private tick: Promise<void> = Promise.resolve();
  private compareQueued = false;
  private closing = false;

  constructor(
    private readonly bus: EventBus,
    private readonly log: BotEventLog,
    private readonly stats: StatsService,
    private readonly streams: EventStreams,
  ) {}

  onModuleInit(): void {
    this.bus.subscribe((message) => this.dispatch(message));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.stopTicker();
    await this.tick;
  }

  /** 429 past a stream limit; else the stream's events. */
  async follow(
    ip: string,
    lastEventId: number | null,
    signal: AbortSignal,
    socket: StreamSocket | null,
  ): Promise<Observable<MessageEvent>> {
    const stream = this.streams.start('bot', anonymousOwner(ip), signal, socket);
    const follower = new BotFollower(stream);
    this.followers.add(follower);
    stream.onEnd(() => {
      this.followers.delete(follower);
      if (this.followers.size === 0) this.stopTicker();
    });
    this.ticker ??= this.startTicker();
    try {
      const missed = lastEventId === null ? null : await this.log.since(lastEventId);
      if (missed) {
        follower.start(missed.map(streamed), missed.at(-1)?.id ?? lastEventId!);
      } else {
        const { seq } = await this.log.last();
        const stats = await this.stats.currentStats();
        follower.start(
          [{ type: 'stats', id: String(seq), retry: RECONNECT_DELAY_MS, data: stats }],
          seq,
        );
      }
    } catch (error) {
      stream.end();
      throw error;
    }
    return stream.events;
  }

  /** A report may change a status: compared now, not at the next tick (a quick flap is seen). */
  @OnEvent(ShardReportedEvent.event)
  onShardReported(): void {
    void this.bus.publish({ kind: 'shard-reported' });
  }

  private dispatch(message: BusMessage): void {
    if (message.kind === 'resync') {
      for (const follower of this.followers) {
        follower.resync(this.log, this.stats).catch((error: Error) => {
          this.logger.warn({ reason: error.message }, 'Could not resume a bot health stream');
          follower.stream.end();
        });
      }
      return;
    }
    if (message.kind === 'shard-reported') {
      // Only an instance with followers compares; the one holding the lead appends.
      if (this.ticker) this.compareSoon();
      return;
    }
    if (message.kind !== 'bot') return;
    for (const follower of this.followers) follower.receive(message.events);
  }

  /** Queues a comparison, unless one is queued already: it will read the state as it is then. */
  private compareSoon(): void {
    if (this.compareQueued) return;
    this.compareQueued = true;
    this.tick = this.tick.then(() => {
      this.compareQueued = false;
      return this.compare();
    });
  }

  private startTicker(): NodeJS.Timeout {
    const ticker = setInterval(() => this.compareSoon(), BOT_HEALTH_INTERVAL_MS);
    ticker.unref();
    // At once too: a first follower hears of changes made before anyone followed.
    this.compareSoon();
    return ticker;
  }

  private stopTicker(): void {
    if (!this.ticker) return;
    clearInterval(this.ticker);
    this.ticker = null;
    this.tick = this.tick.then(() => this.log.release());
  }

  private async compare(): Promise<void> {
    if (this.closing) return;
    try {
      if (!(await this.log.lead(BOT_HEALTH_INTERVAL_MS * 3))) return;
      const current = healthOf(await this.stats.currentStats());
      const { state } = await this.log.last();
      const changes = botChanges(state, current);
      if (changes.length > 0) await this.log.append(current, changes);
    } catch (error) {
      if (!this.closing) {
        this.logger.warn({ reason: (error as Error).message }, 'Could not compare the bot health');
      }
    }
  }
}
