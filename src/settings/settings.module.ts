import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { GuildsModule } from 'src/guilds/guilds.module';
import { SettingsHistorySetting } from 'src/settings/revisions/settings-history.setting';
import { SettingsCache } from 'src/settings/engine/settings-cache';
import { SettingsCallers } from 'src/settings/engine/settings-callers';
import { SettingsEntriesRepository } from 'src/settings/engine/settings-entries.repository';
import { SettingsRevisionsRepository } from 'src/settings/revisions/settings-revisions.repository';
import { GuildSettingsWriters } from 'src/settings/engine/guild-settings-writers';
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
 * The settings engine. Modules declare their settings with `@DeclareSetting()` providers (the
 * permission settings in `src/permissions/`, the moderation settings in `src/moderation/`, the
 * audit-log sinks in `src/audit-log/`, …); the registry finds them at boot. The engine declares one
 * of its own: the trail of its revisions (`settings_history`). It checks every operation against
 * the permission model through `SettingsPermissions` (`schema/settings-permissions.ts`), which the
 * module owning that model provides to every module (`PermissionsModule`).
 */
@Feature({
  tags: {
    settings:
      "A guild's settings: schemas, and the View, Create, Update, Delete and Reorder operations",
  },
  commands: () =>
    import('./settings.cli').then((m) => [m.ExportSettingsCommand, m.ImportSettingsCommand]),
})
@Module({
  imports: [DiscoveryModule, GuildsModule],
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
    SettingsHistorySetting,
  ],
  exports: [SettingsTransferService, RevisionFeed],
})
export class SettingsModule {}
