import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { CurrentSession } from 'src/common/decorators/current-session.decorator';
import { Body, Controller, Get, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ApiSnowflakeParam } from 'src/common/decorators/api-snowflake-param.decorator';
import { Auth } from 'src/common/decorators/auth.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { RateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import {
  ImportReportDto,
  ImportSettingsDto,
  SettingsExportDto,
} from 'src/settings/transfer/dto/transfer.dto';
import { SettingsTransferService } from 'src/settings/transfer/settings-transfer.service';
import { GuildId } from 'src/common/decorators/guild-id.decorator';

@ApiTags('settings')
@Auth()
@ApiSnowflakeParam('guild_id', DEMO_DEFAULTS.mainServer)
@Controller('guilds/:guild_id/settings')
export class SettingsTransferController {
  constructor(private readonly transfer: SettingsTransferService) {}

  @Get('export')
  @ApiOperation({
    summary: "The guild's configuration as one document: every setting you may view",
  })
  @ApiOkResponse({ type: SettingsExportDto })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.NotFound)
  export(
    @CurrentSession() author: AuthenticatedSession,
    @GuildId() guildId: string,
  ): Promise<SettingsExportDto> {
    return this.transfer.export(guildId, author);
  }

  @Post('import')
  @HttpCode(HttpStatus.OK)
  @RateLimit('settings-write')
  @ApiOperation({
    summary:
      "Make the guild's settings equal to an export: a dry run reports the exact changes, an apply commits them all or none",
  })
  @ApiOkResponse({ type: ImportReportDto })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.NotFound)
  import(
    @CurrentSession() author: AuthenticatedSession,
    @GuildId() guildId: string,
    @Body() body: ImportSettingsDto,
  ): Promise<ImportReportDto> {
    return this.transfer.import(guildId, author, body);
  }
}
