import { Injectable } from '@nestjs/common';
import { DEMO_ROLES } from 'src/platform/emulator/demo.seed';
import { PermissionFlagsBits as P } from 'discord-api-types/v10';
import {
  array,
  auditColumns,
  info,
  profileColumn,
  scalar,
  text,
} from 'src/settings/schema/columns';
import { LockdownSettingsEntity } from 'src/moderation/lockdown-settings.entity';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
} from 'src/settings/schema/settings-definition';

/** The guild's lockdown configuration (one entry, `default`). */
@DeclareSetting()
@Injectable()
export class LockdownSettingsSetting implements SettingProvider {
  readonly definition: SettingDefinition = {
    group: 'moderation',
    entity: LockdownSettingsEntity,
    // Works in the demo guild: Swagger UI's example bodies, and the suite's walk (checked at boot).
    samples: {
      create: { id: 'default', member_roles: [DEMO_ROLES.member], require_correct_layout: true },
      update: { require_correct_layout: false },
    },
    schema: {
      id: 'lockdown_settings',
      name: 'Lockdown',
      description:
        'Which roles a lockdown silences, and how strictly the channel layout is checked.',
      icon: 'mdi:lock',
      index_by: null,
      operations: ['View', 'Create', 'Update', 'Delete'],
      columns: [
        profileColumn(),
        info(
          'about',
          'What a lockdown does',
          'A lockdown removes Send Messages from the member roles in every channel until it ends. The bot needs Manage Channels and Manage Roles.',
        ),
        array('member_roles', 'Member roles', text('role'), {
          description: 'The roles silenced during a lockdown',
        }),
        scalar(
          'require_correct_layout',
          'Require correct layout',
          { type: 'Boolean' },
          {
            description:
              'Refuse to lock down when channel permissions differ from what the bot expects',
          },
        ),
        ...auditColumns(),
      ],
      title_template: 'Lockdown ({{id}})',
      view_template: 'Silences {{member_roles}}',
      postsend_template: 'Lockdown settings saved',
      footer: null,
    },
    botNeeds: { guild: P.ManageChannels | P.ManageRoles },
  };
}
