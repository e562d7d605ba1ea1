import { UsersService } from 'src/users/users.service';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { useTestApp } from 'test/support/test-app';
import { BUILTIN_SETTINGS, WRITABLE_SETTINGS } from 'test/support/declared-settings';
import { actor, ok, ROLE, type Actor } from 'test/support/demo-world';

const SETTINGS = BUILTIN_SETTINGS;

describe('settings: each built-in setting for each kind of caller', () => {
  const t = useTestApp();
  const callers: Record<string, Actor> = {};

  beforeAll(async () => {
    callers.owner = await actor(t(), DEMO_IDS.alice);
    callers.permitted = await actor(t(), DEMO_IDS.demoUser);
    callers.withoutPermission = await actor(t(), DEMO_IDS.carol);
    callers.nonMember = await actor(t(), DEMO_IDS.dave);
    callers.banned = await actor(t(), DEMO_IDS.bob);
    // The moderator role (the demo user's) may view every setting.
    ok(
      await callers.owner.exec('guildroles', 'Create', {
        role_id: ROLE.moderator,
        perms: SETTINGS.map((setting) => `${setting}.view`),
        index: 1,
      }),
    );
    await t().app.get(UsersService).setState(DEMO_IDS.bob, 'banned');
  });

  it.each(SETTINGS)('%s: View', async (setting) => {
    const statuses: Record<string, [number, string | undefined]> = {};
    for (const [name, caller] of Object.entries(callers)) {
      const res = await caller.exec(setting, 'View', {});
      statuses[name] = [res.status, res.body.code as string | undefined];
    }
    expect(statuses).toEqual({
      owner: [200, undefined],
      permitted: [200, undefined],
      withoutPermission: [403, 'Restricted'],
      nonMember: [403, 'Restricted'],
      banned: [403, 'ApiBanned'],
    });
  });

  it.each(WRITABLE_SETTINGS)('%s: writes need their own permission, not View', async (setting) => {
    for (const operation of ['Create', 'Update', 'Delete']) {
      const res = await callers.permitted.exec(setting, operation, {});
      expect({ operation, status: res.status, message: res.body.message }).toEqual({
        operation,
        status: 403,
        message: `You need the permission ${setting}.${operation.toLowerCase()} in this guild`,
      });
    }
  });
});
