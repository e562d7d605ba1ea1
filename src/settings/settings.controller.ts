import { Body, Controller, Get, Header, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Auth } from 'src/common/decorators/auth.decorator';
import { CurrentSession } from 'src/common/decorators/current-session.decorator';
import { ApiSnowflakeParam } from 'src/common/decorators/api-snowflake-param.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import { RateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import { ExecuteSettingDto, SettingResultDto } from 'src/settings/dto/execute-setting.dto';
import { SettingsService } from 'src/settings/engine/settings.service';
import { GuildId } from 'src/common/decorators/guild-id.decorator';

@ApiTags('settings')
@Auth()
@ApiSnowflakeParam('guild_id', DEMO_DEFAULTS.mainServer)
@Controller('guilds/:guild_id/settings')
export class SettingsController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @ApiOperation({
    summary: "Every module's settings (schemas and templates); membership is not required",
  })
  @ApiOkResponse({
    description: '`{"<group>": {"type": "Ok", "data": [Setting]}}`',
    schema: { type: 'object', additionalProperties: { type: 'object' } },
  })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.NotFound)
  list(
    @CurrentSession() session: AuthenticatedSession,
    @GuildId() guildId: string,
  ): Promise<Record<string, { type: 'Ok'; data: unknown[] }>> {
    return this.settings.list(guildId, session.userId);
  }

  @Post()
  @HttpCode(HttpStatus.OK)
  // A View reads: it is not a write (the general per-user limit still counts it).
  @RateLimit(
    'settings-write',
    ({ body }) => (body as { operation?: unknown } | null)?.operation !== 'View',
  )
  @ApiOperation({ summary: 'Run a setting operation: View, Create, Update, Delete or Reorder' })
  @ApiOkResponse({ type: SettingResultDto })
  @ApiErrorResponses(
    ErrorCode.BadRequest,
    ErrorCode.Restricted,
    ErrorCode.NotFound,
    ErrorCode.VersionConflict,
  )
  // The engine answers a SettingResultDto already encoded as JSON.
  @Header('Content-Type', 'application/json; charset=utf-8')
  execute(
    @CurrentSession() author: AuthenticatedSession,
    @GuildId() guildId: string,
    @Body() body: ExecuteSettingDto,
  ): Promise<Buffer> {
    return this.settings.execute(guildId, author, body);
  }
}
