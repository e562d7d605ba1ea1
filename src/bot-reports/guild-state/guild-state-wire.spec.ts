import { AppException } from 'src/common/errors/app.exception';
import { GuildStateBatchDto } from 'src/bot-reports/guild-state/dto/guild-state.dto';
import { guildStateBatch, wireAccepts } from 'src/bot-reports/guild-state/guild-state-wire';
import { AppValidationPipe } from 'src/common/validation/app-validation.pipe';

const GUILD = '1100000000000000100';
const AT = '2026-11-29T10:00:00.000Z';
const role = {
  id: '1100000000000000101',
  name: 'mods',
  permissions: '8',
  position: 1,
  managed: false,
};
const channel = {
  id: '1100000000000000102',
  type: 0,
  name: 'general',
  position: 0,
  parent_id: null,
  flags: 0,
  permission_overwrites: [{ id: GUILD, type: 0, allow: '0', deny: '1024' }],
};
const thread = {
  id: '1100000000000000103',
  type: 11,
  name: 'a thread',
  parent_id: channel.id,
  flags: 0,
  archived: false,
};
const member = {
  user_id: '1100000000000000104',
  roles: [role.id],
  communication_disabled_until: null,
};
const guild = {
  id: GUILD,
  name: 'Guild',
  icon: null,
  owner_id: '1100000000000000105',
  roles: [role],
  channels: [channel],
  threads: [thread],
  bot_member: member,
};

/** A batch with one report of every type. */
function validBatch(): Record<string, unknown> {
  const reports = [
    { type: 'guild_create', guild, hash: 'a'.repeat(64) },
    { type: 'guild_update', guild: { name: 'x', icon: 'abc', owner_id: GUILD } },
    { type: 'guild_delete', unavailable: true },
    { type: 'role_upsert', role },
    { type: 'role_delete', role_id: role.id },
    { type: 'channel_upsert', channel },
    { type: 'channel_delete', channel_id: channel.id },
    { type: 'thread_upsert', thread },
    { type: 'thread_delete', thread_id: thread.id },
    { type: 'thread_list_sync', channel_ids: [channel.id], threads: [thread] },
    { type: 'thread_list_sync', threads: [] },
    {
      type: 'bot_member_update',
      member: { ...member, communication_disabled_until: '2026-11-29T11:00:00+01:00' },
    },
  ].map((report, i) => ({ seq: i + 1, guild_id: GUILD, at: AT, ...report }));
  return { stream: { id: 'stream-1', started_at: AT }, reports };
}

const pipe = new AppValidationPipe();
const byPipe = (body: unknown): Promise<unknown> =>
  Promise.resolve(pipe.transform(body, { type: 'body', metatype: GuildStateBatchDto }));

/** Every path to a leaf (or a whole object or array) of a JSON value. */
function paths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [path];
  const children = Object.entries(value).flatMap(([key, child]) =>
    paths(child, [...path, Array.isArray(value) ? Number(key) : key]),
  );
  return [path, ...children];
}

function replaced(body: unknown, path: (string | number)[], next: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(body)) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1);
  if (last === undefined) return next;
  if (next === undefined) delete parent[last];
  else parent[last] = next;
  return copy;
}

/** Values a client might send in place of any other. */
const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'x'.repeat(101),
  '01',
  '-1',
  '18446744073709551616',
  '2026-11-29',
  '2026-11-29 10:00:00Z',
  0,
  -1,
  1.5,
  256,
  2 ** 53,
  true,
  [],
  {},
  { extra: 1 },
];

describe('the guild-state wire format, compiled', () => {
  it('accepts a batch with every report type, as the DTOs do', async () => {
    const body = validBatch();
    expect(wireAccepts(body)).toBe(true);
    await expect(byPipe(body)).resolves.toBeInstanceOf(GuildStateBatchDto);
    // Accepted as parsed: no instance is made.
    await expect(guildStateBatch(body)).resolves.toBe(body);
  });

  it('never accepts what the DTOs refuse: every field of every report type, each bad value', async () => {
    const body = validBatch();
    let refused = 0;
    for (const path of paths(body)) {
      for (const next of REPLACEMENTS) {
        const bad = replaced(body, path, next);
        let pipeAccepts = true;
        try {
          await byPipe(bad);
        } catch (error) {
          expect(error).toBeInstanceOf(AppException);
          pipeAccepts = false;
        }
        if (!pipeAccepts) {
          refused += 1;
          // The same 400 as the DTOs give, naming each problem (the path and value say which).
          expect([path, next, wireAccepts(bad)]).toEqual([path, next, false]);
          await expect(guildStateBatch(bad)).rejects.toThrow(AppException);
        }
      }
    }
    // The sweep did reach bad values (most of them).
    expect(refused).toBeGreaterThan(1_000);
  });

  it('refuses more than the DTOs only where the service refuses anyway (a stray payload)', async () => {
    const body = validBatch();
    const stray = replaced(body, ['reports', 4, 'channel_id'], channel.id);
    expect(wireAccepts(stray)).toBe(false);
    // The DTOs take it; the feed then names the stray field (guild-state-feed.e2e-spec.ts).
    await expect(guildStateBatch(stray)).resolves.toBeInstanceOf(GuildStateBatchDto);
  });
});
