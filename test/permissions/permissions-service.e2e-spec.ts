import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { PermissionsService } from 'src/permissions/permissions.service';
import { useTestApp } from 'test/support/test-app';
import { actor, GUILD, ok, ROLE } from 'test/support/demo-world';

/** What any module gets from the permissions module: "may this member do X in this guild?". */
describe('PermissionsService for other modules', () => {
  const t = useTestApp();
  const permissions = (): PermissionsService => t().app.get(PermissionsService);
  /** `PermissionsService.may`, asked of one permission string. */
  const may = async (
    guildId: string,
    userId: string,
    permission: string,
    scope?: string[],
  ): Promise<boolean> => (await permissions().may(guildId, { userId, scope }))(permission);

  beforeAll(async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.moderator,
        perms: ['lockdown.*', '~lockdown.delete', 'commands.view'],
        index: 2,
      }),
    );
    ok(
      await owner.exec('guildmembers', 'Create', {
        user_id: DEMO_IDS.carol,
        perm_overrides: ['lockdown.create'],
      }),
    );
    ok(
      await owner.exec('guildmembers', 'Create', {
        user_id: DEMO_IDS.dave,
        perm_overrides: ['global.*'],
      }),
    );
  });

  it('answers from the role entries of the member’s Discord roles, negations included', async () => {
    // The demo user holds the Moderator role.
    await expect(may(GUILD, DEMO_IDS.demoUser, 'lockdown.create')).resolves.toBe(true);
    await expect(may(GUILD, DEMO_IDS.demoUser, 'lockdown.delete')).resolves.toBe(false);
    await expect(may(GUILD, DEMO_IDS.demoUser, 'guildroles.view')).resolves.toBe(false);
  });

  it('answers from a member’s own overrides', async () => {
    await expect(may(GUILD, DEMO_IDS.carol, 'lockdown.create')).resolves.toBe(true);
    await expect(may(GUILD, DEMO_IDS.carol, 'lockdown.update')).resolves.toBe(false);
  });

  it('gives the guild owner everything', async () => {
    await expect(may(GUILD, DEMO_IDS.alice, 'anything.at.all')).resolves.toBe(true);
  });

  it('gives a non-member nothing, even what was granted to them directly', async () => {
    await expect(may(GUILD, DEMO_IDS.dave, 'anything.at.all')).resolves.toBe(false);
    await expect(may(GUILD, DEMO_IDS.dave, 'lockdown.view')).resolves.toBe(false);
  });

  it('sees a change made through the settings API at once', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    ok(
      await owner.exec('guildmembers', 'Update', {
        user_id: DEMO_IDS.carol,
        perm_overrides: ['lockdown.update'],
      }),
    );
    await expect(may(GUILD, DEMO_IDS.carol, 'lockdown.update')).resolves.toBe(true);
    await expect(may(GUILD, DEMO_IDS.carol, 'lockdown.create')).resolves.toBe(false);
  });

  it("limits an API token's caller to the token's scope, and says so when refusing", async () => {
    await expect(may(GUILD, DEMO_IDS.alice, 'lockdown.view', ['lockdown.view'])).resolves.toBe(
      true,
    );
    await expect(may(GUILD, DEMO_IDS.alice, 'commands.view', ['lockdown.view'])).resolves.toBe(
      false,
    );
    const scoped = await permissions().may(GUILD, {
      userId: DEMO_IDS.alice,
      scope: ['lockdown.view'],
    });
    expect(() => scoped.require('commands.view')).toThrow(
      'This API token is limited to the permissions lockdown.view; it cannot use commands.view',
    );
    const carol = await permissions().may(GUILD, { userId: DEMO_IDS.carol });
    expect(() => carol.require('commands.update')).toThrow(
      'You need the permission commands.update in this guild',
    );
    expect(() => carol.require('lockdown.update')).not.toThrow();
  });

  it('refuses a guild the bot is not in with 404 NotFound', async () => {
    await expect(may('1', DEMO_IDS.alice, 'lockdown.view')).rejects.toMatchObject({
      code: 'NotFound',
      status: 404,
    });
  });
});
