import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { GuildsModule } from 'src/guilds/guilds.module';
import { PermissionsModule } from 'src/permissions/permissions.module';
import { AuditlogSinksSetting } from 'src/settings/builtins/auditlog-sinks.setting';
import { GuildMembersSetting } from 'src/settings/builtins/guildmembers.setting';
import { GuildRolesSetting } from 'src/settings/builtins/guildroles.setting';
import { LockdownSettingsSetting } from 'src/settings/builtins/lockdown-settings.setting';
import { ProtectionSetting } from 'src/settings/builtins/protection.setting';
import { SettingsHistorySetting } from 'src/settings/builtins/settings-history.setting';
import { SettingsCache } from 'src/settings/engine/settings-cache';
import { SettingsCallers } from 'src/settings/engine/settings-callers';
import { SettingsEntriesRepository } from 'src/settings/engine/settings-entries.repository';
import { SettingsRevisionsRepository } from 'src/settings/revisions/settings-revisions.repository';
import { GuildSettingsWriters } from 'src/settings/engine/settings-lock';
import { SettingsController } from 'src/settings/settings.controller';
import { RevisionFeed } from 'src/settings/revisions/revision-feed.service';
import { SettingsRegistry } from 'src/settings/schema/settings-registry';
import { SettingsService } from 'src/settings/engine/settings.service';
import { SettingsRevisionsController } from 'src/settings/revisions/settings-revisions.controller';
import { SettingsRevisionsService } from 'src/settings/revisions/settings-revisions.service';
import { SettingsRollbackService } from 'src/settings/revisions/settings-rollback.service';
import { SettingsTransferController } from 'src/settings/transfer/settings-transfer.controller';
import { SettingsTransferService } from 'src/settings/transfer/settings-transfer.service';
import { Feature } from 'src/common/feature/feature.decorator';

/**
 * The settings engine and the built-in settings. Other modules declare settings of their own with
 * `@DeclareSetting()` providers; the registry finds them at boot.
 */
@Feature({
  tags: {
    settings:
      "A guild's settings: schemas, and the View, Create, Update, Delete and Reorder operations",
  },
  commands: () =>
    import('./settings.commands').then((m) => [m.ExportSettingsCommand, m.ImportSettingsCommand]),
})
@Module({
  imports: [DiscoveryModule, GuildsModule, PermissionsModule],
  controllers: [SettingsController, SettingsRevisionsController, SettingsTransferController],
  providers: [
    SettingsRegistry,
    SettingsCache,
    GuildSettingsWriters,
    SettingsService,
    SettingsCallers,
    SettingsEntriesRepository,
    SettingsRevisionsRepository,
    SettingsRevisionsService,
    RevisionFeed,
    SettingsRollbackService,
    SettingsTransferService,
    GuildRolesSetting,
    GuildMembersSetting,
    AuditlogSinksSetting,
    LockdownSettingsSetting,
    ProtectionSetting,
    SettingsHistorySetting,
  ],
  exports: [SettingsTransferService, RevisionFeed],
})
export class SettingsModule {}
