import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BotGuildShardEntity } from 'src/bot-guilds/bot-guild-shard.entity';
import { BotGuildEntity } from 'src/bot-guilds/bot-guild.entity';
import { BotGuildsFeedService } from 'src/bot-guilds/bot-guilds-feed.service';
import { BotGuildsController } from 'src/bot-guilds/bot-guilds.controller';
import { BotGuildsRepository } from 'src/bot-guilds/bot-guilds.repository';
import { BotMembershipService } from 'src/bot-guilds/bot-membership.service';
import { DemoBotReporter } from 'src/bot-guilds/demo-bot-reporter';

/**
 * Where the bot is: the membership feed its processes report to, held in memory on every
 * instance, with the platform as the fallback (docs/bot-membership.md).
 */
@Module({
  imports: [TypeOrmModule.forFeature([BotGuildEntity, BotGuildShardEntity])],
  controllers: [BotGuildsController],
  providers: [BotGuildsRepository, BotMembershipService, BotGuildsFeedService, DemoBotReporter],
  exports: [BotMembershipService],
})
export class BotGuildsModule {}
