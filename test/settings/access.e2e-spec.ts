import { UsersService } from 'src/users/users.service';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { useTestApp } from 'test/support/test-app';
import { actor, GUILD, ok, ROLE, type Actor } from 'test/support/demo-world';

describe('settings: who may do what', () => {
  const t = useTestApp();
  let owner: Actor;
  let moderator: Actor;
  let helper: Actor;

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
    // The demo user holds the Moderator role; carol holds Helper.
    moderator = await actor(t(), DEMO_IDS.demoUser);
    helper = await actor(t(), DEMO_IDS.carol);
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.moderator,
        perms: ['guildroles.*', 'guildmembers.*', 'rpc.*', '~rpc.ban', 'commands.view'],
        index: 2,
      }),
    );
  });

  it('lets a member without the permission do nothing, View included', async () => {
    for (const operation of ['View', 'Create', 'Update', 'Delete']) {
      const res = await helper.exec('commands', operation, {
        command: 'ban',
        enabled: true,
        allowed_roles: [],
        disabled_channels: [],
      });
      expect({ operation, status: res.status, code: res.body.code }).toEqual({
        operation,
        status: 403,
        code: 'Restricted',
      });
    }
    const res = await helper.exec('guildroles', 'View', {});
    expect(res.body.message).toBe('You need the permission guildroles.view in this guild');
  });

  it('lets a member act on exactly what their entries grant', async () => {
    expect(ok(await moderator.exec('commands', 'View', {}))).toEqual([]);
    const refused = await moderator.exec('commands', 'Create', {
      command: 'ban',
      enabled: true,
      allowed_roles: [],
      disabled_channels: [],
    });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('You need the permission commands.create in this guild');
  });

  it('refuses a non-member everything, even a permission granted to them directly', async () => {
    ok(
      await owner.exec('guildmembers', 'Create', {
        user_id: DEMO_IDS.dave,
        perm_overrides: ['global.*'],
      }),
    );
    const dave = await actor(t(), DEMO_IDS.dave);
    const res = await dave.exec('guildroles', 'View', {});
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('Restricted');
  });

  it('refuses a banned user before anything else', async () => {
    const bob = await actor(t(), DEMO_IDS.bob);
    await t().app.get(UsersService).setState(DEMO_IDS.bob, 'banned');
    const res = await bob.exec('guildroles', 'View', {});
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('ApiBanned');
    await t().app.get(UsersService).setState(DEMO_IDS.bob, 'normal');
  });

  describe('the role hierarchy', () => {
    it('lets a member manage entries of roles below their highest Discord role', async () => {
      const created = ok(
        await moderator.exec('guildroles', 'Create', {
          role_id: ROLE.helper,
          perms: ['rpc.view'],
          index: 3,
        }),
      );
      expect(created).toMatchObject({ role_id: ROLE.helper, created_by: DEMO_IDS.demoUser });
    });

    it.each([
      [
        'a role above their own',
        { role_id: ROLE.administrator, perms: [], index: 5 },
        'Your highest Discord role must be above that role',
      ],
      [
        'an index ranking at or above their own',
        { role_id: ROLE.eventHost, perms: [], index: 2 },
        'The index must rank below your own (a higher number than yours)',
      ],
      [
        'a permission they do not hold',
        { role_id: ROLE.eventHost, perms: ['apps.deploy'], index: 4 },
        'You cannot grant or remove apps.deploy: you do not hold it',
      ],
      [
        'a negated permission they do not hold',
        { role_id: ROLE.eventHost, perms: ['~rpc.ban'], index: 4 },
        'You cannot grant or remove rpc.ban: you do not hold it',
      ],
      [
        'a wildcard without their own negator',
        { role_id: ROLE.eventHost, perms: ['rpc.*'], index: 4 },
        'You cannot change rpc.* unless the entry keeps ~rpc.ban, which limits you',
      ],
    ])('refuses Create for %s', async (_name, fields, message) => {
      const res = await moderator.exec('guildroles', 'Create', fields);
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 403,
        body: { message, code: 'Restricted' },
      });
    });

    it('refuses an Update of their own highest role', async () => {
      const res = await moderator.exec('guildroles', 'Update', {
        role_id: ROLE.moderator,
        index: 5,
      });
      expect(res.body).toEqual({
        message: 'Your highest Discord role must be above that role',
        code: 'Restricted',
      });
    });

    it('lets a wildcard through where the entry already keeps the negator', async () => {
      // Adding ~rpc.ban would need rpc.ban, which the moderator lacks: the owner sets it up.
      ok(
        await owner.exec('guildroles', 'Create', {
          role_id: ROLE.eventHost,
          perms: ['~rpc.ban'],
          index: 4,
        }),
      );
      ok(
        await moderator.exec('guildroles', 'Update', {
          role_id: ROLE.eventHost,
          perms: ['rpc.*', '~rpc.ban'],
        }),
      );
    });

    it('refuses to delete or demote a more senior entry', async () => {
      const del = await moderator.exec('guildroles', 'Delete', { role_id: ROLE.moderator });
      expect(del.status).toBe(403);
      const reorder = await moderator.exec('guildroles', 'Reorder', [
        { role_id: ROLE.moderator, index: 9 },
      ]);
      expect(reorder.status).toBe(403);
    });

    it('refuses member overrides for someone who ranks above the author', async () => {
      // The owner has no entry; give the helper a senior entry and try to edit them.
      ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.helper, index: 1 }));
      const res = await moderator.exec('guildmembers', 'Create', {
        user_id: DEMO_IDS.carol,
        perm_overrides: [],
      });
      expect(res.body).toEqual({ message: 'That member ranks above you', code: 'Restricted' });
      ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.helper, index: 3 }));
      ok(
        await moderator.exec('guildmembers', 'Create', {
          user_id: DEMO_IDS.carol,
          perm_overrides: ['rpc.kick'],
        }),
      );
    });
  });

  it('makes permission changes take effect on the next request', async () => {
    ok(
      await owner.exec('guildroles', 'Update', {
        role_id: ROLE.helper,
        perms: ['rpc.view', 'commands.view'],
      }),
    );
    expect(ok(await helper.exec('commands', 'View', {}))).toEqual([]);
    ok(await owner.exec('guildroles', 'Update', { role_id: ROLE.helper, perms: ['rpc.view'] }));
    expect((await helper.exec('commands', 'View', {})).status).toBe(403);
    expect(GUILD).toBe(DEMO_IDS.community);
  });
});
