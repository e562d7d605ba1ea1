import { displayOrder, type OrderedChannel } from 'src/guilds/channel-order';
import { guildIconUrl } from 'src/guilds/guild-icon';

const ch = (
  id: string,
  type: number,
  position: number,
  parent_id: string | null = null,
): OrderedChannel => ({ id, type, position, parent_id });

describe('channel display order', () => {
  it('orders like the platform client', () => {
    const channels = [
      ch('30', 2, 0, '20'), // voice in category B
      ch('20', 4, 1), // category B
      ch('10', 4, 0), // category A
      ch('12', 0, 1, '10'),
      ch('11', 0, 0, '10'),
      ch('13', 11, 0, '11'), // thread of 11
      ch('14', 11, 0, '11'), // younger thread of 11
      ch('21', 0, 5, '20'), // text sorts before voice even with a higher position
      ch('1', 2, 0), // uncategorised voice
      ch('2', 0, 9), // uncategorised text
      ch('40', 11, 0, '99'), // thread whose parent is not visible
      ch('50', 0, 0, '98'), // child of a category that is not visible
    ];
    expect(displayOrder(channels).map((c) => c.id)).toEqual([
      '50',
      '2',
      '1',
      '10',
      '11',
      '13',
      '14',
      '12',
      '20',
      '21',
      '30',
      '40',
    ]);
  });

  it('breaks position ties by age, comparing ids as numbers', () => {
    const channels = [ch('1000000000000000000', 0, 0), ch('999999999999999999', 0, 0)];
    expect(displayOrder(channels).map((c) => c.id)).toEqual([
      '999999999999999999',
      '1000000000000000000',
    ]);
  });

  it('keeps every channel exactly once', () => {
    const channels = [ch('3', 0, 0, '2'), ch('2', 0, 0, '1'), ch('1', 4, 0)];
    expect(
      displayOrder(channels)
        .map((c) => c.id)
        .sort(),
    ).toEqual(['1', '2', '3']);
  });
});

describe('guild icon URL', () => {
  it.each([
    ['a static icon as PNG', 'abc', 'https://cdn.discordapp.com/icons/1/abc.png'],
    ['an animated icon as GIF', 'a_abc', 'https://cdn.discordapp.com/icons/1/a_abc.gif'],
    ['no icon', null, null],
    ['an empty hash', '', null],
  ])('%s', (_name, hash, expected) => {
    expect(guildIconUrl('1', hash)).toBe(expected);
  });
});
