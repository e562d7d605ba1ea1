import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GuildsModule } from 'src/guilds/guilds.module';
import { GuildMemberEntity } from 'src/permissions/guild-member.entity';
import { GuildMembersSetting } from 'src/permissions/guildmembers.setting';
import { GuildRoleEntity } from 'src/permissions/guild-role.entity';
import { GuildRolesSetting } from 'src/permissions/guildroles.setting';
import { PermissionsService } from 'src/permissions/permissions.service';
import { SettingsPermissions } from 'src/settings/schema/settings-permissions';

/**
 * The bot's authorization model: permission strings per Discord role (`guildroles`) and per member
 * (`guildmembers`), resolved along the role hierarchy, and the two settings that edit them (group
 * `permissions`). Exports `PermissionsService` for any module that imports it, and provides it to
 * every module as the settings engine's `SettingsPermissions` (the engine checks every operation
 * through it without importing this module: global, registered once in `FEATURE_MODULES`).
 */
@Global()
@Module({
  imports: [GuildsModule, TypeOrmModule.forFeature([GuildRoleEntity, GuildMemberEntity])],
  providers: [
    PermissionsService,
    { provide: SettingsPermissions, useExisting: PermissionsService },
    GuildRolesSetting,
    GuildMembersSetting,
  ],
  exports: [PermissionsService, SettingsPermissions],
})
export class PermissionsModule {}
