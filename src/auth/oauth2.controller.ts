import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { OAuth2LoginDto } from 'src/auth/dto/oauth2-login.dto';
import { LoginService } from 'src/auth/login.service';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { RateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import { sessionCreatedDto, SessionCreatedDto } from 'src/sessions/dto/session.dto';

@ApiTags('auth')
@Controller('oauth2')
export class OAuth2Controller {
  constructor(private readonly login: LoginService) {}

  @Public()
  @Post()
  @RateLimit('oauth2')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Log in: exchange an OAuth2 authorization code for a login session',
    description:
      'Requires the identify and guilds scopes. A public client (a single-page dashboard) uses PKCE: it sends the `code_challenge` when sending the user to the platform and the `code_verifier` here. In demo mode, GET /demo/oauth2-code hands out codes (with a `code_challenge` for PKCE).',
  })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.ApiBanned)
  async create(@Body() body: OAuth2LoginDto): Promise<SessionCreatedDto> {
    const { issued, profile } = await this.login.login(
      body.code,
      body.redirect_uri,
      body.code_verifier,
    );
    return sessionCreatedDto(issued, {
      id: profile.id,
      username: profile.username,
      global_name: profile.global_name ?? null,
      avatar: profile.avatar ?? null,
    });
  }
}
