import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RootUsersOnly } from 'src/auth/root-user.guard';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { BotStatsDto, ShardConnectionDto } from 'src/bot-reports/shard-stats/dto/bot-stats.dto';
import {
  ShardReportDto,
  type StoredShardDto,
} from 'src/bot-reports/shard-stats/dto/shard-report.dto';
import { MAX_SHARD_ID, ParseShardIdPipe } from 'src/bot-reports/parse-shard-id.pipe';
import { StatsService } from 'src/bot-reports/shard-stats/stats.service';

@ApiTags('stats')
@ApiExtraModels(ShardConnectionDto)
@Controller()
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Public()
  @Get('bot-stats')
  @ApiOperation({
    summary: "The bot's shards and reach (cached for a few seconds)",
    description: 'A shard that has not reported for over 2 minutes is shown as `Unknown`.',
  })
  @ApiErrorResponses()
  async botStats(): Promise<BotStatsDto> {
    return this.stats.botStats();
  }

  @Put('internal/shards/:shard_id')
  @ApiParam({
    name: 'shard_id',
    schema: { type: 'integer', minimum: 0, maximum: MAX_SHARD_ID, example: 0 },
  })
  @RootUsersOnly()
  @ApiOperation({
    summary: 'A shard of the bot reports its state (API tokens of ROOT_USERS only)',
  })
  // Named, so that Swagger UI prefills the whole report: the sample it made from the schema held
  // only `status` and `real_latency`, and that body, sent as is, was refused (the browser test
  // runs every prefilled body of the demo as it is).
  @ApiBody({
    type: ShardReportDto,
    examples: {
      ready: {
        summary: 'A shard that is connected and serving',
        value: {
          status: 'Ready',
          real_latency: 42,
          guilds: 1520,
          users: 480_000,
          uptime: 3_600,
          total_uptime: 86_400,
        },
      },
    },
  })
  // 403 Restricted comes with @Auth().
  @ApiErrorResponses(ErrorCode.BadRequest)
  report(
    @Param('shard_id', ParseShardIdPipe) shardId: number,
    @Body() body: ShardReportDto,
  ): Promise<StoredShardDto> {
    return this.stats.report(shardId, body);
  }
}
