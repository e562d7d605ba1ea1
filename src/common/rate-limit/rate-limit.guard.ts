import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isOperatorBucket, RATE_LIMIT_BUCKETS } from 'src/common/rate-limit/rate-limit-buckets';
import {
  NO_RATE_LIMIT_KEY,
  RATE_LIMIT_KEY,
  type RouteBucket,
} from 'src/common/rate-limit/rate-limit.decorator';
import { mostPressing, RateLimiter, type BucketState } from 'src/common/rate-limit/rate-limiter';

/**
 * The global rate limit (`APP_GUARD`, after authentication): every request counts in `authenticated`
 * (per user) or `anonymous` (per IP), and in its route's own bucket when it has one. The headers
 * show the bucket closest to refusing; an exhausted bucket answers 429 `RateLimited`. Registered
 * only when limits are on (see AppModule).
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly rootUsers: ReadonlySet<string>;

  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {
    this.rootUsers = new Set(limiter.operators);
  }

  /** Every request counts in `authenticated` (per user) or `anonymous` (per address). */
  private general(userId: string | undefined, ip: string): Promise<BucketState> {
    return userId
      ? this.limiter.count('authenticated', userId)
      : this.limiter.count('anonymous', ip);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(NO_RATE_LIMIT_KEY, targets)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const userId = request.session?.userId;
    const route = this.reflector.get<RouteBucket | undefined>(RATE_LIMIT_KEY, context.getHandler());
    const counts: Promise<BucketState>[] = [];
    if (route && isOperatorBucket(route.bucket)) {
      // The bot's feed: its own budget, for the operators' unscoped tokens only.
      const operator = userId && !request.session?.scope && this.rootUsers.has(userId);
      counts.push(
        operator ? this.limiter.count(route.bucket, userId) : this.general(userId, request.ip),
      );
    } else {
      counts.push(this.general(userId, request.ip));
      if (route && (route.when?.(request) ?? true)) {
        const perUser = RATE_LIMIT_BUCKETS[route.bucket].scope === 'user' && userId;
        counts.push(this.limiter.count(route.bucket, perUser ? userId : request.ip));
      }
    }
    const state = mostPressing(await Promise.all(counts));
    if (!state) return true;
    this.limiter.writeHeaders(http.getResponse<FastifyReply>(), state);
    if (state.blocked) throw this.limiter.refusal(state);
    return true;
  }
}
