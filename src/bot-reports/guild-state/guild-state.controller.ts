import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RootUsersOnly } from 'src/auth/root-user.guard';
import { RateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import {
  GuildStateBatchDto,
  GuildStateDto,
  GuildStateFieldsDto,
  GuildStateReceiptDto,
  GuildStateStatusDto,
} from 'src/bot-reports/guild-state/dto/guild-state.dto';
import { GuildStateFeedService } from 'src/bot-reports/guild-state/guild-state-feed.service';
import { GuildStateService } from 'src/bot-reports/guild-state/guild-state.service';
import { GuildStateBatchBody } from 'src/bot-reports/guild-state/guild-state-wire';
import { MAX_STATE_BATCH_BYTES } from 'clients/bot-reporter/src/guild-state';
import { BodyLimit } from 'src/common/http/body-limit';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { MAX_SHARD_ID, ParseShardIdPipe } from 'src/bot-reports/parse-shard-id.pipe';

/** The bot's guild-state feed: what it sees in its guilds (docs/guild-state.md). */
@ApiTags('stats')
// The two shapes of a report's `guild` (its `oneOf`).
@ApiExtraModels(GuildStateDto, GuildStateFieldsDto)
@RootUsersOnly()
@Controller('internal')
export class GuildStateController {
  constructor(
    private readonly feed: GuildStateFeedService,
    private readonly states: GuildStateService,
  ) {}

  @Post('shards/:shard_id/guild-state')
  @RateLimit('bot-feed')
  // A guild at the platform's maxima (500 channels, 250 roles, 1,000 threads) is about 223 KB.
  @BodyLimit(MAX_STATE_BATCH_BYTES)
  @HttpCode(HttpStatus.OK)
  @ApiParam({
    name: 'shard_id',
    schema: { type: 'integer', minimum: 0, maximum: MAX_SHARD_ID, example: 0 },
  })
  @ApiOperation({
    summary: 'A shard reports what it sees in its guilds (API tokens of ROOT_USERS only)',
    description:
      "A stream of reports per process and shard, applied in `seq` order: a guild's full state on each `GUILD_CREATE` (replacing what was held; also a join), then its changes. Duplicates change nothing; a gap is answered with `gap.expected_seq` and nothing after it is applied; a stream older than the shard's current one is refused (409 `VersionConflict`); `resync` names the guilds whose full state the service needs. Body up to 1 MiB and 1,000 reports. See docs/guild-state.md.",
  })
  // Validated by the wire format's compiled schema, the DTOs' messages for what it refuses.
  @ApiBody({ type: GuildStateBatchDto })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.VersionConflict)
  report(
    @Param('shard_id', ParseShardIdPipe) shardId: number,
    @GuildStateBatchBody() body: GuildStateBatchDto,
  ): Promise<GuildStateReceiptDto> {
    return this.feed.report(shardId, body);
  }

  @Get('guild-state')
  @ApiOperation({
    summary:
      'The guild-state feed: which guilds are read from it and which are behind (API tokens of ROOT_USERS only)',
  })
  @ApiErrorResponses()
  status(): GuildStateStatusDto {
    return this.states.status();
  }
}
