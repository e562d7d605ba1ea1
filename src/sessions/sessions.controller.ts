import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseUUIDPipe,
  Post,
} from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedSession, TokenScope } from 'src/common/auth/authenticated-session';
import { NoStore } from 'src/common/decorators/no-store.decorator';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Auth } from 'src/common/decorators/auth.decorator';
import { CurrentSession } from 'src/common/decorators/current-session.decorator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { CreateSessionDto } from 'src/sessions/dto/create-session.dto';
import {
  CurrentSessionDto,
  sessionCreatedDto,
  SessionCreatedDto,
  SessionListDto,
} from 'src/sessions/dto/session.dto';
import type { TokenScopeDto } from 'src/sessions/dto/token-scope.dto';
import { scopeOf, SessionsService } from 'src/sessions/sessions.service';

const sessionIdPipe = new ParseUUIDPipe({
  exceptionFactory: () => new AppException(ErrorCode.BadRequest, 'session_id must be a UUID'),
});

/** A cached session object never changes, so neither does its answer: built once per object. */
const currentSessionAnswers = new WeakMap<AuthenticatedSession, CurrentSessionDto>();

function currentSessionDto(session: AuthenticatedSession): CurrentSessionDto {
  let answer = currentSessionAnswers.get(session);
  if (!answer) {
    answer = {
      id: session.id,
      user_id: session.userId,
      type: session.type,
      name: session.name,
      state: session.userState,
      created_at: session.createdAt.toISOString(),
      expiry: session.expiresAt.toISOString(),
    };
    currentSessionAnswers.set(session, answer);
  }
  return answer;
}

@ApiTags('sessions')
@Auth()
@Controller('sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Get('@me')
  @ApiOperation({ summary: 'The session making the request' })
  current(@CurrentSession() session: AuthenticatedSession): CurrentSessionDto {
    return currentSessionDto(session);
  }

  @Get()
  @ApiOperation({
    summary:
      "The user's live sessions and API tokens, newest first (a scoped API token sees only itself)",
  })
  async list(@CurrentSession() session: AuthenticatedSession): Promise<SessionListDto> {
    const sessions = await this.sessions.listVisibleTo(session);
    return {
      sessions: sessions.map((s) => ({
        id: s.id,
        name: s.name,
        user_id: s.userId,
        type: s.type,
        created_at: s.createdAt.toISOString(),
        expiry: s.expiresAt.toISOString(),
        current: s.id === session.id,
        last_used_at: s.lastUsedAt?.toISOString() ?? null,
        scope: scopeOf(s.scopeGuilds, s.scopePermissions),
      })),
    };
  }

  @Post()
  @NoStore()
  @Auth('login')
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({
    summary: 'Create an API token (login sessions only; the token is shown once)',
  })
  // The first example is what Swagger UI prefills: a token without a scope, as a shard reporter
  // or any internal route needs (the demo's next step), not one limited to a guild.
  @ApiBody({
    type: CreateSessionDto,
    examples: {
      unscoped: {
        summary: 'A token for a script, without a scope (the bot, a shard reporter)',
        value: { name: 'shard reporter', type: 'api', expiry: 2_592_000 },
      },
      scoped: {
        summary: 'A token limited to one guild and some permission strings',
        value: {
          name: 'moderation-sync script',
          type: 'api',
          expiry: 2_592_000,
          scope: { guilds: ['1100000000000000100'], permissions: ['guildroles.view'] },
        },
      },
    },
  })
  @ApiErrorResponses(ErrorCode.BadRequest)
  async create(
    @CurrentSession() session: AuthenticatedSession,
    @Body() body: CreateSessionDto,
  ): Promise<SessionCreatedDto> {
    const issued = await this.sessions.issueApiToken(
      session.userId,
      body.name,
      body.expiry,
      requestedScope(body.scope),
    );
    return sessionCreatedDto(issued, null);
  }

  @Delete(':session_id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiParam({
    name: 'session_id',
    description: 'The session or API token (its `id` in `GET /sessions`)',
    schema: { type: 'string', format: 'uuid', example: '00000000-0000-4000-8000-000000000000' },
  })
  @ApiOperation({ summary: 'Revoke one of your sessions or API tokens' })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.NotFound)
  async revoke(
    @CurrentSession() session: AuthenticatedSession,
    @Param('session_id', sessionIdPipe) sessionId: string,
  ): Promise<void> {
    if (session.scope && sessionId !== session.id) {
      // A scoped token may end itself, not its user's other sessions.
      throw new AppException(
        ErrorCode.Restricted,
        'This API token is limited to a scope; it may revoke only itself',
      );
    }
    // Another user's session is "not found" too, so that session ids reveal nothing.
    if (!(await this.sessions.revokeOwn(session.userId, sessionId))) {
      throw new AppException(ErrorCode.NotFound, `You have no session ${sessionId}`);
    }
  }
}

/** The scope a new token asks for: null for none; an empty one is refused as meaningless. */
function requestedScope(scope: TokenScopeDto | undefined): TokenScope | null {
  if (scope === undefined) return null;
  if (scope.guilds === undefined && scope.permissions === undefined) {
    const message = 'scope must limit guilds, permissions or both';
    throw new AppException(ErrorCode.BadRequest, `Invalid request: ${message}`, [
      { field: 'scope', message },
    ]);
  }
  const permissions = scope.permissions ?? null;
  if (permissions?.includes('global.*') && permissions.some((p) => p.startsWith('~'))) {
    // `global.*` grants everything whatever else is listed: a negator beside it would not apply.
    const message = 'scope.permissions cannot negate beside global.*, which grants everything';
    throw new AppException(ErrorCode.BadRequest, `Invalid request: ${message}`, [
      { field: 'scope.permissions', message },
    ]);
  }
  return { guilds: scope.guilds ?? null, permissions };
}
