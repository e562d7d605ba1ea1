import { Module } from '@nestjs/common';
import { LockdownSettingsSetting } from 'src/moderation/lockdown-settings.setting';
import { ProtectionSetting } from 'src/moderation/protection.setting';

/**
 * How the bot moderates a guild: its raid and impersonation protection (`protection`) and its
 * lockdowns (`lockdown_settings`), declared as settings the engine serves (group `moderation`).
 * The cases the bot records sit beside it, in `src/cases/`.
 */
@Module({
  providers: [ProtectionSetting, LockdownSettingsSetting],
})
export class ModerationModule {}
