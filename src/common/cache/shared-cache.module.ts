import { Global, Injectable, Module } from '@nestjs/common';
import { SharedCache, type SharedCacheSettings } from 'src/common/cache/shared-cache';
import { Metrics } from 'src/common/metrics/metrics';
import { RedisConnection } from 'src/common/redis/redis.module';

/** The one way a module gets a shared cache: named by its namespace, on the shared Redis. */
@Injectable()
export class SharedCacheFactory {
  constructor(
    private readonly redis: RedisConnection,
    private readonly metrics: Metrics,
  ) {}

  create(settings: SharedCacheSettings): SharedCache {
    return new SharedCache(this.redis, this.redis.keyPrefix, settings, this.metrics);
  }
}

@Global()
@Module({ providers: [SharedCacheFactory], exports: [SharedCacheFactory] })
export class SharedCacheModule {}
