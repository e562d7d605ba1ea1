import { type DynamicModule, Global, Inject, Injectable, Module } from '@nestjs/common';
import { SharedCache, type SharedCacheSettings } from 'src/common/cache/shared-cache';
import { RedisConnection } from 'src/common/redis/redis.module';

const REDIS_KEY_PREFIX = Symbol('REDIS_KEY_PREFIX');

/** The one way a module gets a shared cache: named by its namespace, on the shared Redis. */
@Injectable()
export class SharedCacheFactory {
  constructor(
    private readonly redis: RedisConnection,
    @Inject(REDIS_KEY_PREFIX) private readonly keyPrefix: string,
  ) {}

  create(settings: SharedCacheSettings): SharedCache {
    return new SharedCache(this.redis, this.keyPrefix, settings);
  }
}

@Global()
@Module({})
export class SharedCacheModule {
  /** `redisKeyPrefix`: REDIS_KEY_PREFIX, before every cache's namespace. */
  static forRoot(redisKeyPrefix: string): DynamicModule {
    return {
      module: SharedCacheModule,
      providers: [{ provide: REDIS_KEY_PREFIX, useValue: redisKeyPrefix }, SharedCacheFactory],
      exports: [SharedCacheFactory],
    };
  }
}
