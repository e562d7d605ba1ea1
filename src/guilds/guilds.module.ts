import { Module } from '@nestjs/common';
import { AuthModule } from 'src/auth/auth.module';
import { BotReportsModule } from 'src/bot-reports/bot-reports.module';
import { GuildAccessService } from 'src/guilds/guild-access.service';
import { GuildInfoService } from 'src/guilds/guild-info.service';
import { GuildsController } from 'src/guilds/guilds.controller';
import { UserGuildsService } from 'src/guilds/user-guilds.service';
import { UserMemberService } from 'src/guilds/user-member.service';
import { Feature } from 'src/common/feature/feature.decorator';

/** The user's guilds, and guild access (members, permissions, hierarchy) for every module. */
@Feature({ tags: { guilds: "The user's guilds, with roles, channels and effective permissions" } })
@Module({
  imports: [AuthModule, BotReportsModule],
  controllers: [GuildsController],
  providers: [GuildAccessService, GuildInfoService, UserGuildsService, UserMemberService],
  exports: [GuildAccessService],
})
export class GuildsModule {}
