import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { AppConfig } from 'src/config/app-config';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { DemoCodeDto, DemoCodeQueryDto } from 'src/platform/dto/demo-code.dto';
import { PlatformConnection } from 'src/platform/platform-connection';

const CODE_LIFETIME_S = 600;

/** Demo mode only: stands in for the platform's OAuth2 consent screen. */
@ApiTags('demo')
@Public()
@Controller('demo')
export class DemoController {
  constructor(
    private readonly connection: PlatformConnection,
    private readonly config: AppConfig,
  ) {}

  @Get('oauth2-code')
  @ApiOperation({
    summary: 'Demo mode only: an OAuth2 authorization code for a demo user',
    description:
      'Only registered when the service runs in demo mode (no DISCORD_BOT_TOKEN). Exchange the code with POST /oauth2: `login_body` is the body to send, as it is.',
  })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.NotFound)
  issueCode(@Query() query: DemoCodeQueryDto): DemoCodeDto {
    const emulator = this.connection.emulator;
    const userId = query.user_id ?? DEMO_IDS.alice;
    if (!emulator?.state.user(userId)) {
      throw new AppException(ErrorCode.NotFound, `No demo user has the id ${userId}`);
    }
    if (query.code_challenge_method !== undefined && query.code_challenge === undefined) {
      throw new AppException(ErrorCode.BadRequest, 'code_challenge_method needs a code_challenge');
    }
    const redirectUri = this.config.oauth2.allowedRedirects[0];
    const challenge =
      query.code_challenge === undefined
        ? undefined
        : { challenge: query.code_challenge, method: query.code_challenge_method ?? 'plain' };
    const code = emulator.issueCode({ userId, redirectUri, challenge });
    return {
      code,
      redirect_uri: redirectUri,
      user_id: userId,
      expires_in: CODE_LIFETIME_S,
      login_body: { code, redirect_uri: redirectUri },
    };
  }
}
