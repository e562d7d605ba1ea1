import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RedisConnection } from 'src/common/redis/redis.module';
import type { CheckStatus, ReadinessChecksDto } from 'src/health/dto/health.dto';
import { Clock } from 'src/common/time/clock';

const PING_TIMEOUT_MS = 2_000;
/**
 * `/readyz` is public and not rate limited: one round of pings serves every probe for this long,
 * so a flood of probes costs no more database work than one probe a second.
 */
export const READINESS_REUSE_MS = 1_000;

@Injectable()
export class HealthService {
  private last: { startedAt: number; checks: Promise<ReadinessChecksDto> } | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly redis: RedisConnection,
    private readonly clock: Clock,
  ) {}

  /**
   * Every dependency's state, pinged in parallel (Redis only when configured); a round started
   * less than READINESS_REUSE_MS ago, finished or still running, is shared.
   */
  readiness(): Promise<ReadinessChecksDto> {
    const now = this.clock.nowMs();
    if (this.last && now - this.last.startedAt < READINESS_REUSE_MS) return this.last.checks;
    this.last = { startedAt: now, checks: this.pingAll() };
    return this.last.checks;
  }

  private async pingAll(): Promise<ReadinessChecksDto> {
    const [database, redis] = await Promise.all([
      this.check(() => this.pingDatabase()),
      this.redis.client ? this.check(() => this.redis.ping()) : Promise.resolve(undefined),
    ]);
    return redis === undefined ? { database } : { database, redis };
  }

  private async pingDatabase(): Promise<boolean> {
    await this.dataSource.query('SELECT 1');
    return true;
  }

  private async check(ping: () => Promise<boolean>): Promise<CheckStatus> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    try {
      return (await Promise.race([ping(), timeout])) ? 'up' : 'down';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }
}
