import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { useTestApp } from 'test/support/test-app';
import { actor, ok, ROLE } from 'test/settings/settings-support';

describe('settings: concurrent changes of one entry', () => {
  const t = useTestApp();

  it('applies both updates, one after the other, and loses neither', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    ok(
      await owner.exec('guildroles', 'Create', {
        role_id: ROLE.vip,
        perms: ['rpc.view'],
        index: 7,
      }),
    );
    const [a, b] = await Promise.all([
      owner.exec('guildroles', 'Update', { role_id: ROLE.vip, perms: ['rpc.view', 'rpc.kick'] }),
      owner.exec('guildroles', 'Update', { role_id: ROLE.vip, index: 8 }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const [row] = ok(await owner.exec('guildroles', 'View', { role_id: ROLE.vip })) as Record<
      string,
      unknown
    >[];
    expect(row).toMatchObject({ perms: ['rpc.view', 'rpc.kick'], index: 8 });
    const history = ok(
      await owner.exec('settings_history', 'View', { setting: 'guildroles', operation: 'Update' }),
    ) as {
      before: { perms: string[]; index: number };
    }[];
    // The second update saw the first one's result: each change was made on the latest row.
    expect(history).toHaveLength(2);
    const befores = history.map((h) => h.before);
    expect(befores).toContainEqual(expect.objectContaining({ perms: ['rpc.view'], index: 7 }));
  });
});
