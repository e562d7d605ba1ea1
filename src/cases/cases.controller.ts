import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RootUsersOnly } from 'src/auth/root-user.guard';
import { Auth } from 'src/common/decorators/auth.decorator';
import { CasesService } from 'src/cases/cases.service';
import { CaseDto, CasePageDto, ListCasesQueryDto, RecordCaseDto } from 'src/cases/dto/cases.dto';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ApiSnowflakeParam } from 'src/common/decorators/api-snowflake-param.decorator';
import { GuildId } from 'src/common/decorators/guild-id.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import { RequirePermission } from 'src/permissions/require-permission.decorator';

@ApiTags('cases')
@ApiSnowflakeParam('guild_id', DEMO_DEFAULTS.mainServer)
@Controller('guilds/:guild_id/cases')
export class CasesController {
  constructor(private readonly cases: CasesService) {}

  @Post()
  @RootUsersOnly()
  @ApiOperation({
    summary: 'The bot records a moderation case (API tokens of ROOT_USERS only)',
    description: "The case takes the guild's next number, from 1.",
  })
  @ApiCreatedResponse({ type: CaseDto })
  // 403 Restricted comes with @Auth().
  @ApiErrorResponses(ErrorCode.BadRequest)
  record(@GuildId() guildId: string, @Body() body: RecordCaseDto): Promise<CaseDto> {
    return this.cases.record(guildId, body);
  }

  @Get()
  @Auth()
  @RequirePermission('cases.view')
  @ApiOperation({
    summary: "A guild's moderation cases, newest first, a page at a time",
    description: 'Filtered by the member acted on with `user_id`.',
  })
  @ApiOkResponse({ type: CasePageDto })
  list(@GuildId() guildId: string, @Query() query: ListCasesQueryDto): Promise<CasePageDto> {
    return this.cases.list(guildId, query);
  }
}
