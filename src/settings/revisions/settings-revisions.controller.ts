import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { CurrentSession } from 'src/common/decorators/current-session.decorator';
import {
  applyDecorators,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Injectable,
  Param,
  type PipeTransform,
  Post,
  Query,
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ApiSnowflakeParam } from 'src/common/decorators/api-snowflake-param.decorator';
import { Auth } from 'src/common/decorators/auth.decorator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import {
  ListRevisionsQueryDto,
  MAX_REVISION,
  RevisionPageDto,
  RollbackResultDto,
} from 'src/settings/revisions/dto/revisions.dto';
import { SettingsRollbackService } from 'src/settings/revisions/settings-rollback.service';
import { RateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import { ParseIntegerPipe } from 'src/common/validation/integer-text';
import { SettingsRegistry } from 'src/settings/schema/settings-registry';
import { SettingsRevisionsService } from 'src/settings/revisions/settings-revisions.service';
import { GuildId } from 'src/common/decorators/guild-id.decorator';

const REVISION_PIPE = new ParseIntegerPipe('revision', 1, MAX_REVISION);

/**
 * The `setting` filter names a declared setting: an unknown id is a mistake to report, not an
 * empty page (and no text the database could refuse reaches it).
 */
@Injectable()
export class DeclaredSettingFilterPipe implements PipeTransform<ListRevisionsQueryDto> {
  constructor(private readonly registry: SettingsRegistry) {}

  transform(query: ListRevisionsQueryDto): ListRevisionsQueryDto {
    if (query.setting === undefined || this.registry.get(query.setting) !== undefined) return query;
    const known = this.registry
      .all()
      .map((setting) => setting.schema.id)
      .sort();
    const message = `setting ${JSON.stringify(query.setting)} is not a declared setting; use one of ${known.join(', ')}`;
    throw new AppException(ErrorCode.BadRequest, `Invalid request: ${message}`, [
      { field: 'setting', message },
    ]);
  }
}

/** What both rollback routes share: a write on one revision, answering the new revisions. */
function Rollback(summary: string): MethodDecorator {
  return applyDecorators(
    RateLimit('settings-write'),
    ApiParam({
      name: 'revision',
      description: "A revision's number in this guild",
      schema: { type: 'integer', minimum: 1, maximum: MAX_REVISION, example: 1 },
    }),
    ApiOperation({ summary }),
    ApiOkResponse({ type: RollbackResultDto }),
    ApiErrorResponses(
      ErrorCode.BadRequest,
      ErrorCode.Restricted,
      ErrorCode.NotFound,
      ErrorCode.VersionConflict,
    ),
  );
}

@ApiTags('settings')
@Auth()
@ApiSnowflakeParam('guild_id', DEMO_DEFAULTS.mainServer)
@Controller('guilds/:guild_id/settings/revisions')
export class SettingsRevisionsController {
  constructor(
    private readonly revisions: SettingsRevisionsService,
    private readonly rollback: SettingsRollbackService,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      "The guild's settings revisions, newest first, filtered and paged (needs settings_history.view)",
  })
  @ApiOkResponse({ type: RevisionPageDto })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.NotFound)
  list(
    @CurrentSession() author: AuthenticatedSession,
    @GuildId() guildId: string,
    @Query(DeclaredSettingFilterPipe) query: ListRevisionsQueryDto,
  ): Promise<RevisionPageDto> {
    return this.revisions.list(guildId, author, query);
  }

  @Post(':revision/revert')
  // Beside the route, not in Rollback(): the document generator reads it from the method itself.
  @HttpCode(HttpStatus.OK)
  @Rollback(
    'Undo one revision: its entry is put back as it was, with the checks of a change made by hand',
  )
  revert(
    @CurrentSession() author: AuthenticatedSession,
    @GuildId() guildId: string,
    @Param('revision', REVISION_PIPE) revision: number,
  ): Promise<RollbackResultDto> {
    return this.undone(this.rollback.revert(guildId, author, revision));
  }

  @Post(':revision/restore')
  @HttpCode(HttpStatus.OK)
  @Rollback(
    "Undo every later revision of this revision's setting: the setting as this revision left it",
  )
  restore(
    @CurrentSession() author: AuthenticatedSession,
    @GuildId() guildId: string,
    @Param('revision', REVISION_PIPE) revision: number,
  ): Promise<RollbackResultDto> {
    return this.undone(this.rollback.restore(guildId, author, revision));
  }

  private async undone(
    revisions: Promise<RollbackResultDto['revisions']>,
  ): Promise<RollbackResultDto> {
    return { revisions: await revisions };
  }
}
