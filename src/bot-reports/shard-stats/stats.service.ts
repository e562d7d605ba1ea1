import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { SharedCache } from 'src/common/cache/shared-cache';
import { SharedCacheFactory } from 'src/common/cache/shared-cache.module';
import { Clock } from 'src/common/time/clock';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import type {
  ShardReportDto,
  StoredShardDto,
} from 'src/bot-reports/shard-stats/dto/shard-report.dto';
import { summariseShards, type BotStats } from 'src/bot-reports/shard-stats/shard-stats';
import { ShardStatusEntity } from 'src/bot-reports/shard-stats/shard-status.entity';
import { ShardReportedEvent } from 'src/bot-reports/shard-stats/stats.events';

/** How long `GET /bot-stats` is served from the cache; a shard report clears it. */
const STATS_TTL_MS = 5_000;
const STATS_KEY = 'bot-stats';

@Injectable()
export class StatsService {
  private readonly cache: SharedCache;

  constructor(
    @InjectRepository(ShardStatusEntity) private readonly shards: Repository<ShardStatusEntity>,
    private readonly clock: Clock,
    caches: SharedCacheFactory,
    private readonly events: EventEmitter2,
  ) {
    this.cache = caches.create({
      namespace: 'stats',
      defaultTtlMs: STATS_TTL_MS,
      maxEntries: 1,
      // A report on any instance must clear the summary everywhere.
      localCopyWhenShared: false,
    });
  }

  /** Stores a shard's report (replacing its previous one). */
  async report(shardId: number, report: ShardReportDto): Promise<StoredShardDto> {
    if (report.uptime > report.total_uptime) {
      const message = 'uptime must not exceed total_uptime';
      throw new AppException(ErrorCode.BadRequest, `Invalid request: ${message}`, [
        { field: 'uptime', message },
      ]);
    }
    const row: ShardStatusEntity = {
      shardId,
      status: report.status,
      latencyMs: report.real_latency,
      guilds: report.guilds,
      users: report.users,
      uptimeSeconds: report.uptime,
      totalUptimeSeconds: report.total_uptime,
      reportedAt: this.clock.now(),
    };
    await this.shards.upsert(row, ['shardId']);
    await this.cache.delete(STATS_KEY);
    this.events.emit(ShardReportedEvent.event, new ShardReportedEvent(shardId));
    return {
      shard_id: row.shardId,
      status: row.status,
      real_latency: row.latencyMs,
      guilds: row.guilds,
      users: row.users,
      uptime: row.uptimeSeconds,
      total_uptime: row.totalUptimeSeconds,
      reported_at: row.reportedAt.toISOString(),
    };
  }

  /** Every shard's last report summed up, cached for a few seconds across instances. */
  botStats(): Promise<BotStats> {
    return this.cache.getOrLoad(STATS_KEY, () => this.currentStats());
  }

  /** The same summary read now, past the cache (what the bot health stream compares). */
  async currentStats(): Promise<BotStats> {
    return summariseShards(await this.shards.find(), this.clock.now());
  }
}
