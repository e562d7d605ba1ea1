import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GuildsModule } from 'src/guilds/guilds.module';
import { GuildMemberEntity } from 'src/permissions/guild-member.entity';
import { GuildRoleEntity } from 'src/permissions/guild-role.entity';
import { PermissionsService } from 'src/permissions/permissions.service';

/**
 * The bot's authorization model: permission strings per Discord role (`guildroles`) and per member
 * (`guildmembers`), resolved along the role hierarchy. Exports `PermissionsService` for any module,
 * and the two repositories for the settings that edit them.
 */
@Module({
  imports: [GuildsModule, TypeOrmModule.forFeature([GuildRoleEntity, GuildMemberEntity])],
  providers: [PermissionsService],
  exports: [PermissionsService, TypeOrmModule],
})
export class PermissionsModule {}
