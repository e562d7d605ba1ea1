import { Injectable } from '@nestjs/common';
import { scalar, text } from 'src/settings/schema/columns';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
} from 'src/settings/schema/settings-definition';
import { SettingsRevisionEntity } from 'src/settings/engine/settings-revision.entity';

const SETTING_OPERATIONS = ['Create', 'Update', 'Delete', 'Reorder'];
const json = { type: 'Json', style: 'json' } as const;

/** The guild's settings revisions, newest first (View only; filtered queries: `…/revisions`). */
@DeclareSetting()
@Injectable()
export class SettingsHistorySetting implements SettingProvider {
  readonly definition: SettingDefinition = {
    group: 'settings',
    entity: SettingsRevisionEntity,
    order: { revision: 'DESC' },
    schema: {
      id: 'settings_history',
      name: 'Settings history',
      description:
        "Every change made to this guild's settings, one revision per entry changed: who, when, how, and the entry before and after.",
      icon: 'mdi:history',
      index_by: null,
      operations: ['View'],
      columns: [
        scalar(
          'revision',
          'Revision',
          { type: 'Integer', min: 1 },
          {
            description: "The change's number in this guild (only grows)",
            primaryKey: true,
          },
        ),
        scalar('setting', 'Setting', text('normal', { max_length: 64 }), {
          description: 'The setting changed',
        }),
        scalar('key', 'Entry', json, {
          description: "The entry's primary key (null on records from before revisions)",
          nullable: true,
        }),
        scalar('operation', 'Operation', text('normal', { allowed_values: SETTING_OPERATIONS }), {
          description: 'What was done',
        }),
        scalar('user_id', 'By', text('user'), { description: 'Who made the change' }),
        scalar('session_id', 'Session', text('uuid'), {
          description: 'The login session or API token used (null: an operator, from the CLI)',
          nullable: true,
        }),
        scalar(
          'session_type',
          'Session type',
          text('normal', { allowed_values: ['login', 'api'] }),
          { description: 'login (the dashboard) or api (an API token)', nullable: true },
        ),
        scalar('diff', 'Changes', json, {
          description: 'The columns whose value changed: {column: {before, after}}',
          nullable: true,
        }),
        scalar('before', 'Before', json, {
          description: 'The entry before (null for Create)',
          nullable: true,
        }),
        scalar('after', 'After', json, {
          description: 'The entry after (null for Delete)',
          nullable: true,
        }),
        scalar(
          'reverts',
          'Reverts',
          { type: 'Integer', min: 1 },
          {
            description: 'The revision this change undid (a rollback), else null',
            nullable: true,
          },
        ),
        scalar('created_at', 'At', text('timestamp'), { description: 'When' }),
      ],
      title_template: '#{{revision}} {{operation}} {{setting}}',
      view_template: '{{user_id}} {{operation}} {{setting}} at {{created_at}}',
      postsend_template: '',
      footer: null,
    },
  };
}
