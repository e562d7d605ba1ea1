import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RedisConnection } from 'src/common/redis/redis.module';
import type { CheckStatus, ReadinessChecksDto } from 'src/health/dto/health.dto';

const PING_TIMEOUT_MS = 2_000;

@Injectable()
export class HealthService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly redis: RedisConnection,
  ) {}

  /** Pings every dependency in parallel; Redis only when configured. */
  async readiness(): Promise<ReadinessChecksDto> {
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
