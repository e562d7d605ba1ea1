import { PermissionFlagsBits as P } from 'discord-api-types/v10';
import type { GuildContext } from 'src/guilds/guild-context';
import { array, scalar, text } from 'src/settings/schema/columns';
import { botProblems, referenceProblems } from 'src/settings/engine/settings-checks';
import type { RegisteredSetting } from 'src/settings/schema/settings-registry';

const ROLE = '200';
const CHANNEL = '300';
const LOCKED = '301';

/** A guild with one role and two channels; the bot may send in one of them only. */
const context = {
  role: (id: string) => (id === ROLE ? { id } : undefined),
  channel: (id: string) => (id === CHANNEL || id === LOCKED ? { id } : undefined),
  bot: {
    basePermissions: P.ViewChannel | P.SendMessages,
    permissionsIn: (channel: { id: string }) =>
      channel.id === CHANNEL ? P.ViewChannel | P.SendMessages : P.ViewChannel,
  },
} as unknown as GuildContext;

const setting = {
  schema: {
    columns: [
      scalar('role', 'Role', text('role'), { description: 'A role' }),
      array('channels', 'Channels', text('channel'), { description: 'Channels' }),
      scalar('name', 'Name', text('normal'), { description: 'Free text' }),
    ],
  },
  botNeeds: { guild: P.ViewChannel | P.ManageRoles, channelColumns: { channels: P.SendMessages } },
} as unknown as RegisteredSetting;

describe('what a write must satisfy in the live guild', () => {
  it('accepts roles and channels of the guild, and leaves free text alone', () => {
    expect(
      referenceProblems(setting, context, { role: ROLE, channels: [CHANNEL], name: '999' }),
    ).toEqual([]);
  });

  it('names every role or channel that is not of this guild, in single rows and in Reorder lists', () => {
    expect(referenceProblems(setting, context, { role: '1', channels: [CHANNEL, '2'] })).toEqual([
      { field: 'role', message: '1 is not a role of this guild' },
      { field: 'channels', message: '2 is not a channel of this guild that the bot can view' },
    ]);
    expect(referenceProblems(setting, context, [{ role: ROLE }, { role: '3' }])).toEqual([
      { field: 'role', message: '3 is not a role of this guild' },
    ]);
  });

  it('names what the bot lacks in the guild and in each named channel', () => {
    expect(botProblems(setting, context, { channels: [CHANNEL, LOCKED, '404'] })).toEqual([
      { field: 'fields', message: 'The bot needs ManageRoles in this guild' },
      { field: 'channels', message: `The bot needs SendMessages in channel ${LOCKED}` },
    ]);
  });

  it('asks nothing of the bot for a setting that needs nothing', () => {
    const plain = { ...setting, botNeeds: undefined } as RegisteredSetting;
    expect(botProblems(plain, context, { channels: [LOCKED] })).toEqual([]);
  });
});
