import { Injectable } from '@nestjs/common';
import { scalar, text } from 'src/settings/builtins/columns';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
} from 'src/settings/setting-definition';
import { SettingsAuditEntity } from 'src/settings/settings-audit.entity';

const SETTING_OPERATIONS = ['Create', 'Update', 'Delete', 'Reorder'];

/** The settings audit log, newest first (View only). */
@DeclareSetting()
@Injectable()
export class SettingsHistorySetting implements SettingProvider {
  readonly definition: SettingDefinition = {
    group: 'settings',
    entity: SettingsAuditEntity,
    order: { created_at: 'DESC', id: 'ASC' },
    schema: {
      id: 'settings_history',
      name: 'Settings history',
      description:
        "Every change made to this guild's settings: who, when, and the entry before and after.",
      icon: 'mdi:history',
      index_by: null,
      operations: ['View'],
      columns: [
        scalar('id', 'ID', text('uuid'), { description: 'The change', primaryKey: true }),
        scalar('setting', 'Setting', text('normal', { max_length: 64 }), {
          description: 'The setting changed',
        }),
        scalar('operation', 'Operation', text('normal', { allowed_values: SETTING_OPERATIONS }), {
          description: 'What was done',
        }),
        scalar('user_id', 'By', text('user'), { description: 'Who made the change' }),
        scalar(
          'before',
          'Before',
          { type: 'Json', style: 'json' },
          {
            description: 'The entry before (null for Create)',
            nullable: true,
          },
        ),
        scalar(
          'after',
          'After',
          { type: 'Json', style: 'json' },
          {
            description: 'The entry after (null for Delete)',
            nullable: true,
          },
        ),
        scalar('created_at', 'At', text('timestamp'), { description: 'When' }),
      ],
      title_template: '{{operation}} {{setting}}',
      view_template: '{{user_id}} {{operation}} {{setting}} at {{created_at}}',
      postsend_template: '',
      footer: null,
    },
  };
}
