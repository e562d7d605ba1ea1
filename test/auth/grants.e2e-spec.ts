import { GrantService } from 'src/auth/grant.service';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { PlatformClient } from 'src/platform/platform.client';
import { databaseOf, emulatorOf, loginAs } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';
import { faultsOf } from 'test/support/emulator-faults';

describe('platform grants', () => {
  const t = useTestApp();
  const tokenRequests = (): number => emulatorOf(t()).countRequests('POST /oauth2/token');
  const expireGrant = (userId: string): Promise<unknown> =>
    databaseOf(t()).query(
      `UPDATE users SET grant_expires_at = now() - interval '1 second' WHERE id = $1`,
      [userId],
    );

  it('hands out the stored access token while it is valid', async () => {
    await loginAs(t(), DEMO_IDS.demoUser);
    const before = tokenRequests();
    const token = await t().app.get(GrantService).accessTokenFor(DEMO_IDS.demoUser);
    expect((await t().app.get(PlatformClient).getUser(token)).id).toBe(DEMO_IDS.demoUser);
    expect(tokenRequests()).toBe(before);
  });

  it('refreshes an expired grant once for many concurrent requests', async () => {
    await loginAs(t(), DEMO_IDS.alice);
    await expireGrant(DEMO_IDS.alice);
    const before = tokenRequests();
    const grants = t().app.get(GrantService);
    const tokens = await Promise.all(
      Array.from({ length: 10 }, () => grants.accessTokenFor(DEMO_IDS.alice)),
    );
    expect(new Set(tokens).size).toBe(1);
    expect(tokenRequests()).toBe(before + 1);
    expect((await t().app.get(PlatformClient).getUser(tokens[0])).id).toBe(DEMO_IDS.alice);
    const [row] = await databaseOf(t()).query<{ valid: boolean }[]>(
      `SELECT grant_expires_at > now() + interval '1 day' AS valid FROM users WHERE id = $1`,
      [DEMO_IDS.alice],
    );
    expect(row.valid).toBe(true);
    // The refreshed grant is used from now on.
    expect(await grants.accessTokenFor(DEMO_IDS.alice)).toBe(tokens[0]);
    expect(tokenRequests()).toBe(before + 1);
  });

  it('marks the grant dead when the platform refuses the refresh, and asks for a new login', async () => {
    await loginAs(t(), DEMO_IDS.carol);
    await expireGrant(DEMO_IDS.carol);
    faultsOf(emulatorOf(t())).inject('POST /oauth2/token', {
      kind: 'respond',
      status: 400,
      body: { error: 'invalid_grant' },
    });
    const grants = t().app.get(GrantService);
    const relogin = {
      code: 'Restricted',
      status: 403,
      message: 'Your Discord authorization has expired or was revoked; log in again',
    };
    await expect(grants.accessTokenFor(DEMO_IDS.carol)).rejects.toMatchObject(relogin);
    const before = tokenRequests();
    await expect(grants.accessTokenFor(DEMO_IDS.carol)).rejects.toMatchObject(relogin);
    expect(tokenRequests()).toBe(before);
    const [row] = await databaseOf(t()).query<{ grant_state: string; grant_access_token: null }[]>(
      `SELECT grant_state, grant_access_token FROM users WHERE id = $1`,
      [DEMO_IDS.carol],
    );
    expect(row).toEqual({ grant_state: 'dead', grant_access_token: null });
    // A new login brings the grant back.
    await loginAs(t(), DEMO_IDS.carol);
    await expect(grants.accessTokenFor(DEMO_IDS.carol)).resolves.toEqual(expect.any(String));
  });

  it('asks a user without any grant to log in', async () => {
    await expect(t().app.get(GrantService).accessTokenFor('42')).rejects.toMatchObject({
      code: 'Restricted',
    });
  });
});
