import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OAuth2LoginDto } from 'src/auth/dto/oauth2-login.dto';
import { LoginService } from 'src/auth/login.service';
import { NoStore } from 'src/common/decorators/no-store.decorator';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { RateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import { sessionCreatedDto, SessionCreatedDto } from 'src/sessions/dto/session.dto';

/** What Swagger UI's prefilled login body holds where the code goes. */
const LOGIN_EXAMPLE_CODE = 'paste the code from GET /demo/oauth2-code here';

@ApiTags('auth')
@Controller('oauth2')
export class OAuth2Controller {
  constructor(private readonly login: LoginService) {}

  @Public()
  @Post()
  @NoStore()
  @RateLimit('oauth2')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Log in: exchange an OAuth2 authorization code for a login session',
    description:
      "Requires the identify and guilds scopes; ask for guilds.members.read too (optional): with it the service reads your own member in a guild (your roles, a timeout) with your token rather than the bot's, so opening a guild whose state the bot reports costs the bot no call. A public client (a single-page dashboard) uses PKCE: it sends the `code_challenge` when sending the user to the platform and the `code_verifier` here. In demo mode, GET /demo/oauth2-code hands out codes (with a `code_challenge` for PKCE) and the body to send here as `login_body`. A refused exchange does not use the code up: send it again, corrected.",
  })
  // The body prefilled in Swagger UI must work once only the code is replaced: no verifier
  // (the demo's codes have no challenge unless one is asked for), the demo's redirect URI.
  @ApiBody({
    type: OAuth2LoginDto,
    examples: {
      login: {
        summary: 'A code from GET /demo/oauth2-code (or the platform), without PKCE',
        value: { code: LOGIN_EXAMPLE_CODE, redirect_uri: DEFAULT_REDIRECT_URI },
      },
      pkce: {
        summary: 'A code issued with a code_challenge: send its verifier too',
        value: {
          code: LOGIN_EXAMPLE_CODE,
          redirect_uri: DEFAULT_REDIRECT_URI,
          code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        },
      },
    },
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
