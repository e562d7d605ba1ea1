import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExtension } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { isSnowflake, notASnowflake } from 'src/common/validation/snowflake';
import { PermissionsService } from 'src/permissions/permissions.service';

const REQUIRED_PERMISSION = Symbol('requiredPermission');

/** The OpenAPI extension that names a route's permission (docs/permissions.md). */
export const PERMISSION_EXTENSION = 'x-required-permission';

/**
 * The route needs `permission` in the guild its path names (`guild_id`): the caller is refused with
 * 403 `Restricted` (404 when the bot is not in the guild) before the handler runs, by the check
 * `PermissionsService.may` makes, with a scoped API token held to its scope. The permission is in
 * the OpenAPI document (`x-required-permission`, and a line of the route's description), so readers
 * of the code, of Swagger UI and of the typed client see it where the route is.
 */
export function RequirePermission(permission: string): MethodDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_PERMISSION, permission),
    UseGuards(GuildPermissionGuard),
    ApiExtension(PERMISSION_EXTENSION, permission),
    ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.NotFound),
  );
}

/** Runs after authentication and the token's guild scope (global guards run first). */
@Injectable()
export class GuildPermissionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly permissions: PermissionsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const permission = this.reflector.get<string | undefined>(
      REQUIRED_PERMISSION,
      context.getHandler(),
    );
    if (permission === undefined) return true;
    const { session, params } = context.switchToHttp().getRequest<FastifyRequest>();
    const guildId = (params as { guild_id?: unknown } | undefined)?.guild_id;
    // The guard runs before the route's pipes: a malformed id is refused as they would refuse it.
    if (!isSnowflake(guildId))
      throw new AppException(ErrorCode.BadRequest, notASnowflake('guild_id'));
    if (session === null)
      throw new AppException(ErrorCode.NoAuthToken, 'This route needs a session');
    const may = await this.permissions.may(guildId, {
      userId: session.userId,
      scope: session.scope?.permissions ?? undefined,
    });
    may.require(permission);
    return true;
  }
}
