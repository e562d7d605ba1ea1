import type request from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { loginAs } from 'test/support/auth';
import type { TestApp } from 'test/support/test-app';
import { describeShared, useTwoInstances } from 'test/support/two-instances';
import { GUILD, ok, ROLE } from 'test/support/demo-world';

describeShared('settings across two instances', () => {
  const instances = useTwoInstances({ REDIS_KEY_PREFIX: `settings-${Date.now()}:` });

  it('serves a change made on one instance from the other at once', async () => {
    const [first, second] = instances();
    const { token } = await loginAs(first, DEMO_IDS.alice);
    const exec = (app: TestApp, operation: string, fields: unknown): request.Test =>
      app
        .http()
        .post(`/guilds/${GUILD}/settings`)
        .set('Authorization', `Bearer ${token}`)
        .send({ setting: 'guildroles', operation, fields });
    // The second instance caches the empty list first.
    expect(ok(await exec(second, 'View', {}))).toEqual([]);
    ok(await exec(first, 'Create', { role_id: ROLE.helper, perms: ['rpc.view'], index: 3 }));
    expect(ok(await exec(second, 'View', {}))).toEqual([
      expect.objectContaining({ role_id: ROLE.helper, perms: ['rpc.view'] }),
    ]);
    ok(await exec(second, 'Delete', { role_id: ROLE.helper }));
    expect(ok(await exec(first, 'View', {}))).toEqual([]);
  });
});
