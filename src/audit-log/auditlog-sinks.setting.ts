import { Injectable } from '@nestjs/common';
import { DEMO_CHANNELS } from 'src/platform/emulator/demo.seed';
import { PermissionFlagsBits as P } from 'discord-api-types/v10';
import { AuditlogSinkEntity } from 'src/audit-log/auditlog-sink.entity';
import { array, auditColumns, scalar, text } from 'src/settings/schema/columns';
import { textChannel } from 'src/settings/schema/guild-checks';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
} from 'src/settings/schema/settings-definition';

export const AUDIT_EVENTS = [
  'member_ban',
  'member_unban',
  'member_kick',
  'member_timeout',
  'member_warn',
  'message_purge',
  'lockdown',
  'settings_change',
];

/** Where the bot posts moderation events. */
@DeclareSetting()
@Injectable()
export class AuditlogSinksSetting implements SettingProvider {
  readonly definition: SettingDefinition = {
    group: 'logging',
    entity: AuditlogSinkEntity,
    // Works in the demo guild: Swagger UI's example bodies, and the suite's walk (checked at boot).
    samples: {
      create: { channel: DEMO_CHANNELS.modLog, events: ['member_ban', 'lockdown'], enabled: true },
      update: { enabled: false },
    },
    schema: {
      id: 'auditlog_sinks',
      name: 'Audit log channels',
      description: 'Channels the bot posts moderation events to, and which events each receives.',
      icon: 'mdi:notebook',
      index_by: null,
      operations: ['View', 'Create', 'Update', 'Delete'],
      columns: [
        scalar('id', 'ID', text('uuid'), {
          description: 'Chosen by the service',
          primaryKey: true,
          readonly: ['Create', 'Update'],
        }),
        scalar('channel', 'Channel', text('channel'), {
          description:
            'A text or announcement channel; the bot must be able to see, send and embed there',
        }),
        array('events', 'Events', text('normal', { allowed_values: AUDIT_EVENTS }), {
          description: 'The events posted to this channel',
        }),
        scalar(
          'enabled',
          'Enabled',
          { type: 'Boolean' },
          { description: 'Whether events are posted' },
        ),
        ...auditColumns(),
      ],
      title_template: 'Audit log in {{channel}}',
      view_template: '{{channel}}: {{events}}',
      postsend_template: 'Audit log channel {{channel}} saved',
      footer: null,
    },
    botNeeds: { channelColumns: { channel: P.ViewChannel | P.SendMessages | P.EmbedLinks } },
    // Events are posted as messages: a voice channel, a category or a forum cannot take them.
    guildChecks: { channel: [textChannel] },
  };
}
