import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { Auth } from 'src/common/decorators/auth.decorator';
import type { FastifyRequest } from 'fastify';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { AppConfig } from 'src/config/app-config';

/**
 * Lets only the bot's operators (`ROOT_USERS`) through; runs after the global authentication
 * guard, so the session is already resolved. Used on `/internal/*` through `@UseGuards`, which
 * builds it in the using module: no module provides it.
 */
@Injectable()
export class RootUserGuard implements CanActivate {
  private readonly rootUsers: ReadonlySet<string>;

  constructor(config: AppConfig) {
    this.rootUsers = new Set(config.rootUsers);
  }

  canActivate(context: ExecutionContext): boolean {
    const { session } = context.switchToHttp().getRequest<FastifyRequest>();
    if (session?.scope) {
      // A scope names guilds and permission strings; the internal routes are neither.
      throw new AppException(
        ErrorCode.Restricted,
        'This API token is limited to a scope; internal routes need a token without one',
      );
    }
    if (session && this.rootUsers.has(session.userId)) return true;
    throw new AppException(
      ErrorCode.Restricted,
      "Only the bot's operators (ROOT_USERS) may use internal routes",
    );
  }
}

/** The OpenAPI extension that marks a route for the bot's operators' API tokens only. */
export const ROOT_USERS_EXTENSION = 'x-root-users-only';

/**
 * A route (or every route of a controller) for the bot's processes: an API token of a `ROOT_USERS`
 * user, without a scope. Documented in OpenAPI as `x-root-users-only`, beside the session types.
 */
export function RootUsersOnly(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    Auth('api'),
    UseGuards(RootUserGuard),
    ApiExtension(ROOT_USERS_EXTENSION, true),
  );
}
