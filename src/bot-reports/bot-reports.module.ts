import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DemoBotReporter } from 'src/bot-reports/demo-bot-reporter';
import { GuildStateController } from 'src/bot-reports/guild-state/guild-state.controller';
import { GuildStateEntity } from 'src/bot-reports/guild-state/guild-state.entity';
import { GuildStateFeedService } from 'src/bot-reports/guild-state/guild-state-feed.service';
import { GuildStateRepository } from 'src/bot-reports/guild-state/guild-state.repository';
import { GuildStateService } from 'src/bot-reports/guild-state/guild-state.service';
import { BotGuildShardEntity } from 'src/bot-reports/bot-guild-shard.entity';
import { BotGuildEntity } from 'src/bot-reports/bot-guild.entity';
import { BotGuildsFeedService } from 'src/bot-reports/bot-guilds-feed.service';
import { BotGuildsController } from 'src/bot-reports/bot-guilds.controller';
import { BotGuildsRepository } from 'src/bot-reports/bot-guilds.repository';
import { BotMembershipService } from 'src/bot-reports/bot-membership.service';
import { ShardStatusEntity } from 'src/bot-reports/shard-stats/shard-status.entity';
import { StatsController } from 'src/bot-reports/shard-stats/stats.controller';
import { StatsService } from 'src/bot-reports/shard-stats/stats.service';
import { Feature } from 'src/common/feature/feature.decorator';

/**
 * What the bot's processes report under `/internal/shards/{shard_id}`: where the bot is (the
 * membership feed, here, docs/bot-membership.md), what it sees there (the guild-state feed,
 * `guild-state/`, docs/guild-state.md), both held on every instance with the platform as the
 * fallback, and each shard's state with `GET /bot-stats` (`shard-stats/`). The guild-state feed
 * follows the membership feed and writes in its transaction, so the membership feed sits at the
 * top of the folder, below its sub-folders.
 */
@Feature({ tags: { stats: "The bot's shards and reach" } })
@Module({
  imports: [
    TypeOrmModule.forFeature([
      ShardStatusEntity,
      BotGuildEntity,
      BotGuildShardEntity,
      GuildStateEntity,
    ]),
  ],
  controllers: [BotGuildsController, GuildStateController, StatsController],
  providers: [
    StatsService,
    BotGuildsRepository,
    BotMembershipService,
    BotGuildsFeedService,
    GuildStateRepository,
    GuildStateService,
    GuildStateFeedService,
    DemoBotReporter,
  ],
  exports: [StatsService, BotMembershipService, GuildStateService],
})
export class BotReportsModule {}
