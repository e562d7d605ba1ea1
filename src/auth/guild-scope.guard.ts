import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/**
 * A token limited to some guilds may not act in another. A global guard (`APP_GUARD`) that runs
 * after the authentication guard: every route about one guild names it `guild_id`, so every such
 * route is covered, including routes added later. A public route has no session and passes.
 */
@Injectable()
export class GuildScopeGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const { session, params } = context.switchToHttp().getRequest<FastifyRequest>();
    const guilds = session?.scope?.guilds;
    const guildId = (params as { guild_id?: unknown } | undefined)?.guild_id;
    if (!guilds || typeof guildId !== 'string' || guilds.includes(guildId)) return true;
    throw new AppException(
      ErrorCode.Restricted,
      `This API token is limited to the guilds ${guilds.join(', ')}`,
    );
  }
}
