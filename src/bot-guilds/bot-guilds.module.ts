import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BotGuildShardEntity } from 'src/bot-guilds/bot-guild-shard.entity';
import { BotGuildEntity } from 'src/bot-guilds/bot-guild.entity';
import { BotGuildsFeedService } from 'src/bot-guilds/bot-guilds-feed.service';
import { BotGuildsController } from 'src/bot-guilds/bot-guilds.controller';
import { BotGuildsRepository } from 'src/bot-guilds/bot-guilds.repository';
import { BotMembershipService } from 'src/bot-guilds/bot-membership.service';
import { DemoBotReporter } from 'src/bot-guilds/demo-bot-reporter';
import { GuildStateController } from 'src/bot-guilds/guild-state/guild-state.controller';
import { GuildStateEntity } from 'src/bot-guilds/guild-state/guild-state.entity';
import { GuildStateFeedService } from 'src/bot-guilds/guild-state/guild-state-feed.service';
import { GuildStateRepository } from 'src/bot-guilds/guild-state/guild-state.repository';
import { GuildStateService } from 'src/bot-guilds/guild-state/guild-state.service';

/**
 * What the bot's processes report: where the bot is (the membership feed, docs/bot-membership.md)
 * and what it sees there (the guild-state feed, docs/guild-state.md), held on every instance, with
 * the platform as the fallback.
 */
@Module({
  imports: [TypeOrmModule.forFeature([BotGuildEntity, BotGuildShardEntity, GuildStateEntity])],
  controllers: [BotGuildsController, GuildStateController],
  providers: [
    BotGuildsRepository,
    BotMembershipService,
    BotGuildsFeedService,
    GuildStateRepository,
    GuildStateService,
    GuildStateFeedService,
    DemoBotReporter,
  ],
  exports: [BotMembershipService, GuildStateService],
})
export class BotGuildsModule {}
