import { ChannelType } from 'discord-api-types/v10';
import { scalar, text } from 'src/settings/schema/columns';
import { definitionProblems } from 'src/settings/schema/definition-checks';
import { textChannel, type RoleCheck } from 'src/settings/schema/guild-checks';
import type { SettingDefinition } from 'src/settings/schema/settings-definition';
import type { GuildChannel, GuildContext } from 'src/guilds/guild-context';

const aboveEveryone: RoleCheck = { kind: 'role', problem: () => null };

function declared(extra: Partial<SettingDefinition>): SettingDefinition {
  return {
    group: 'test',
    entity: class {},
    schema: {
      id: 'welcome',
      name: 'Welcome',
      description: '',
      icon: '',
      index_by: null,
      operations: ['View', 'Create'],
      columns: [
        scalar('id', 'ID', text('uuid'), { description: '', primaryKey: true }),
        scalar('channel', 'Channel', text('channel'), { description: '' }),
        scalar('role', 'Role', text('role'), { description: '' }),
        scalar('message', 'Message', text('normal'), { description: '' }),
        scalar('enabled', 'Enabled', { type: 'Boolean' }, { description: '' }),
      ],
      title_template: '',
      view_template: '',
      postsend_template: '',
      footer: null,
    },
    ...extra,
  };
}

describe('definitionProblems', () => {
  it.each<[string, Partial<SettingDefinition>, string[]]>([
    ['no rules', {}, []],
    ['a channel check on a channel column', { guildChecks: { channel: [textChannel] } }, []],
    ['a role check on a role column', { guildChecks: { role: [aboveEveryone] } }, []],
    ['bot permissions in a channel column', { botNeeds: { channelColumns: { channel: 1n } } }, []],
    [
      'a check on a column the setting does not have',
      { guildChecks: { chanel: [textChannel] } },
      [
        'welcome: a channel check in guildChecks names the column chanel, which the setting does not have',
      ],
    ],
    [
      'a channel check on a role column',
      { guildChecks: { role: [textChannel] } },
      [
        'welcome: a channel check in guildChecks names the column role, whose values are of the kind role; it needs a channel column',
      ],
    ],
    [
      'a role check on a column that is not text',
      { guildChecks: { enabled: [aboveEveryone] } },
      [
        'welcome: a role check in guildChecks names the column enabled, whose values are not text; it needs a role column',
      ],
    ],
    [
      'bot permissions in a text column that names no channel',
      { botNeeds: { channelColumns: { message: 1n } } },
      [
        'welcome: botNeeds.channelColumns names the column message, whose values are of the kind normal; it needs a channel column',
      ],
    ],
  ])('%s', (_name, extra, problems) => {
    expect(definitionProblems(declared(extra))).toEqual(problems);
  });
});

describe('textChannel', () => {
  const guild = {} as GuildContext;
  const channel = (type: ChannelType): GuildChannel => ({ id: '42', type }) as GuildChannel;
  it.each<[ChannelType, string | null]>([
    [ChannelType.GuildText, null],
    [ChannelType.GuildAnnouncement, null],
    [ChannelType.GuildVoice, '42 is a voice channel; a text or announcement channel is needed'],
    [
      ChannelType.GuildStageVoice,
      '42 is a stage channel; a text or announcement channel is needed',
    ],
    [ChannelType.GuildCategory, '42 is a category; a text or announcement channel is needed'],
    [ChannelType.GuildForum, '42 is a forum channel; a text or announcement channel is needed'],
    [ChannelType.PublicThread, '42 is a thread; a text or announcement channel is needed'],
  ])('channel type %p: %p', (type, problem) => {
    expect(textChannel.problem(channel(type), guild)).toBe(problem);
  });
});
