import { Injectable } from '@nestjs/common';
import { auditColumns, profileColumn, scalar, text } from 'src/settings/schema/columns';
import { ProtectionEntity } from 'src/moderation/protection.entity';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
} from 'src/settings/schema/settings-definition';

/** Raid and impersonation protection (one entry, `default`). */
@DeclareSetting()
@Injectable()
export class ProtectionSetting implements SettingProvider {
  readonly definition: SettingDefinition = {
    group: 'moderation',
    entity: ProtectionEntity,
    // Works in the demo guild: Swagger UI's example bodies, and the suite's walk (checked at boot).
    samples: {
      create: {
        id: 'default',
        minimum_account_age: '604800',
        max_mentions: 10,
        hoist_detection: 5,
        fake_bot_detection: 0,
      },
      update: { max_mentions: null },
    },
    schema: {
      id: 'protection',
      name: 'Protection',
      description: 'Automatic checks on new members and messages.',
      icon: 'mdi:shield-alert',
      index_by: null,
      operations: ['View', 'Create', 'Update', 'Delete'],
      columns: [
        profileColumn(),
        scalar('minimum_account_age', 'Minimum account age', text('interval'), {
          description: 'Accounts younger than this many seconds are held for review',
          placeholder: '604800',
          nullable: true,
        }),
        scalar(
          'max_mentions',
          'Maximum mentions',
          { type: 'Integer', min: 1, max: 100 },
          {
            description: 'Messages with more mentions are removed',
            nullable: true,
          },
        ),
        scalar(
          'hoist_detection',
          'Hoisting',
          { type: 'BitFlag', values: { LEADING_SYMBOLS: 1, INVISIBLE_CHARACTERS: 2, ZALGO: 4 } },
          { description: 'Names that try to sort to the top of the member list' },
        ),
        scalar(
          'fake_bot_detection',
          'Fake bots',
          { type: 'BitFlag', values: { NAME: 1, AVATAR: 2, OFFICIAL_TAG: 4 } },
          { description: 'Members imitating well-known bots' },
        ),
        ...auditColumns(),
      ],
      title_template: 'Protection ({{id}})',
      view_template: 'Account age {{minimum_account_age}}s, {{max_mentions}} mentions',
      postsend_template: 'Protection settings saved',
      footer: null,
    },
  };
}
