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
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
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
import { SessionsService } from 'src/sessions/sessions.service';

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
  @ApiOperation({ summary: "The user's live sessions and API tokens, newest first" })
  async list(@CurrentSession() session: AuthenticatedSession): Promise<SessionListDto> {
    const sessions = await this.sessions.listLive(session.userId);
    return {
      sessions: sessions.map((s) => ({
        id: s.id,
        name: s.name,
        user_id: s.userId,
        type: s.type,
        created_at: s.createdAt.toISOString(),
        expiry: s.expiresAt.toISOString(),
        current: s.id === session.id,
      })),
    };
  }

  @Post()
  @Auth('login')
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({
    summary: 'Create an API token (login sessions only; the token is shown once)',
  })
  @ApiErrorResponses(ErrorCode.BadRequest)
  async create(
    @CurrentSession() session: AuthenticatedSession,
    @Body() body: CreateSessionDto,
  ): Promise<SessionCreatedDto> {
    const issued = await this.sessions.issueApiToken(session.userId, body.name, body.expiry);
    return sessionCreatedDto(issued, null);
  }

  @Delete(':session_id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Revoke one of your sessions or API tokens' })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.NotFound)
  async revoke(
    @CurrentSession() session: AuthenticatedSession,
    @Param('session_id', sessionIdPipe) sessionId: string,
  ): Promise<void> {
    // Another user's session is "not found" too, so that session ids reveal nothing.
    if (!(await this.sessions.revokeOwn(session.userId, sessionId))) {
      throw new AppException(ErrorCode.NotFound, `You have no session ${sessionId}`);
    }
  }
}
