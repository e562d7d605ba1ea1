import type { DeclaredCommand } from 'src/commands/catalog-rules';
import { hasChanges, planSync, type RemoteCommand } from 'src/commands/command-sync';

const declared: DeclaredCommand[] = [
  {
    name: 'ban',
    description: 'Ban a member',
    default_member_permissions: '4',
    integration_types: [0],
    contexts: [0],
    options: [{ type: 6, name: 'user', description: 'Who', required: true }],
  },
  { name: 'help', description: 'Help', integration_types: [0], contexts: [0, 1] },
  { type: 2, name: 'Whois', integration_types: [0], contexts: [0] },
];

/** As the platform lists a command: ids, versions and defaults filled in. */
const remote = (command: DeclaredCommand, changes: Partial<RemoteCommand> = {}): RemoteCommand => ({
  id: '1',
  type: 1,
  description: '',
  default_member_permissions: null,
  nsfw: false,
  ...command,
  ...changes,
});

describe('command sync plan', () => {
  it('adds everything to an empty application', () => {
    expect(planSync(declared, [])).toEqual({
      added: ['/ban', '/help', 'Whois (user menu)'],
      updated: [],
      removed: [],
      unchanged: [],
    });
  });

  it('finds nothing to do when the platform holds the catalog with its defaults filled in', () => {
    const plan = planSync(
      declared,
      declared.map((c) => remote(c)),
    );
    expect(plan.unchanged).toHaveLength(3);
    expect(hasChanges(plan)).toBe(false);
  });

  it.each([
    ['a description', { description: 'Ban someone' }],
    ['a permission default', { default_member_permissions: '8' }],
    ['contexts', { contexts: [0, 1] }],
    ['an option', { options: [{ type: 6, name: 'user', description: 'Who', required: false }] }],
    ['a localization', { name_localizations: { de: 'bannen' } }],
  ])('sees a changed %s', (_name, change) => {
    const plan = planSync(declared, [
      remote(declared[0], change),
      ...declared.slice(1).map((c) => remote(c)),
    ]);
    expect(plan.updated).toEqual(['/ban']);
    expect(hasChanges(plan)).toBe(true);
  });

  it('removes commands the catalog no longer has; same name, other type is another command', () => {
    const plan = planSync(declared, [
      ...declared.map((c) => remote(c)),
      remote({ name: 'old', description: 'Gone' }),
      remote({ type: 3, name: 'Whois' }),
    ]);
    expect(plan.removed).toEqual(['/old', 'Whois (message menu)']);
  });
});
