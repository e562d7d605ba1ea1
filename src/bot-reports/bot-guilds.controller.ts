import { Body, Controller, Get, Param, Post, Put, HttpCode, HttpStatus } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RootUsersOnly } from 'src/auth/root-user.guard';
import { RateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import { BotGuildsFeedService } from 'src/bot-reports/bot-guilds-feed.service';
import {
  FeedStatusDto,
  GuildEventsDto,
  GuildEventsReceiptDto,
  GuildSnapshotDto,
  SnapshotReceiptDto,
} from 'src/bot-reports/dto/bot-guilds.dto';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { MAX_SHARD_ID, ParseShardIdPipe } from 'src/bot-reports/parse-shard-id.pipe';

const SHARD_PARAM = {
  name: 'shard_id',
  schema: { type: 'integer' as const, minimum: 0, maximum: MAX_SHARD_ID, example: 0 },
};

/** The bot's membership feed: where the bot is, reported by its own processes. */
@ApiTags('stats')
@RootUsersOnly()
@Controller('internal')
export class BotGuildsController {
  constructor(private readonly feed: BotGuildsFeedService) {}

  @Put('shards/:shard_id/guilds')
  @RateLimit('bot-feed')
  @ApiParam(SHARD_PARAM)
  @ApiOperation({
    summary: 'A shard reports every guild it is in (on READY; API tokens of ROOT_USERS only)',
    description:
      'Replaces the shard\'s set once all `total` ids have arrived; a large snapshot is sent in parts of at most 4,000 ids, each carrying the same `snapshot_at`. Parts may be sent again. A guild left after `snapshot_at` stays left. See docs/api.md, "Telling the service where the bot is".',
  })
  @ApiErrorResponses(ErrorCode.BadRequest)
  snapshot(
    @Param('shard_id', ParseShardIdPipe) shardId: number,
    @Body() body: GuildSnapshotDto,
  ): Promise<SnapshotReceiptDto> {
    return this.feed.snapshot(shardId, body);
  }

  @Post('shards/:shard_id/guild-events')
  @RateLimit('bot-feed')
  @HttpCode(HttpStatus.OK)
  @ApiParam(SHARD_PARAM)
  @ApiOperation({
    summary: 'A shard reports guilds joined and left (API tokens of ROOT_USERS only)',
    description:
      'Each event is applied unless the service holds a newer report of that guild (by `at`), so replays and late batches change nothing. An outage (`GUILD_DELETE` with `unavailable`) is not a leave: do not report it. An empty batch tells the service the shard is alive.',
  })
  @ApiErrorResponses(ErrorCode.BadRequest)
  events(
    @Param('shard_id', ParseShardIdPipe) shardId: number,
    @Body() body: GuildEventsDto,
  ): Promise<GuildEventsReceiptDto> {
    return this.feed.events(shardId, body);
  }

  @Get('bot-guilds')
  @ApiOperation({
    summary: 'The membership feed: whether it is live, per shard (API tokens of ROOT_USERS only)',
  })
  @ApiErrorResponses()
  status(): Promise<FeedStatusDto> {
    return this.feed.status();
  }
}
