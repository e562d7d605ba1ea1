import { Injectable } from '@nestjs/common';
import { DEMO_CHANNELS, DEMO_ROLES } from 'src/platform/emulator/demo.seed';
import { COMMAND_NAMES } from 'src/commands/command-catalog';
import { CommandConfigEntity } from 'src/commands/command-config.entity';
import { array, auditColumns, scalar, text } from 'src/settings/schema/columns';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
} from 'src/settings/schema/settings-definition';

/** Per-guild configuration of the bot's built-in commands. */
@DeclareSetting()
@Injectable()
export class CommandsSetting implements SettingProvider {
  readonly definition: SettingDefinition = {
    group: 'commands',
    entity: CommandConfigEntity,
    // Works in the demo guild: Swagger UI's example bodies, and the suite's walk (checked at boot).
    samples: {
      create: {
        command: 'ban',
        enabled: false,
        allowed_roles: [DEMO_ROLES.moderator],
        disabled_channels: [DEMO_CHANNELS.general],
      },
      update: { enabled: true },
    },
    schema: {
      id: 'commands',
      name: 'Commands',
      description: 'Turn built-in commands on or off, and limit who may use them and where.',
      icon: 'mdi:slash-forward-box',
      index_by: null,
      operations: ['View', 'Create', 'Update', 'Delete'],
      columns: [
        scalar('command', 'Command', text('normal', { allowed_values: [...COMMAND_NAMES] }), {
          description: 'A command of the catalog (GET /bot-state)',
          primaryKey: true,
        }),
        scalar(
          'enabled',
          'Enabled',
          { type: 'Boolean' },
          { description: 'Whether the command runs here' },
        ),
        array('allowed_roles', 'Allowed roles', text('role'), {
          description: 'Only these roles may use it (empty: everyone allowed by Discord)',
        }),
        array('disabled_channels', 'Disabled channels', text('channel'), {
          description: 'Channels where it does not run',
        }),
        ...auditColumns(),
      ],
      title_template: '{{command}}',
      view_template: '{{command}}: {{enabled}}',
      postsend_template: 'Command {{command}} saved',
      footer: null,
    },
  };
}
