import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Middleware } from 'openapi-fetch';
import {
  createBotManagementClient,
  type BotManagementClient,
  type SettingFields,
} from 'clients/typescript/src';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { SHARD_REPORT } from 'test/support/shard-report';
import { useTestApp } from 'test/support/test-app';
import { derivedEndpoint, type Document } from 'test/robustness/derived-endpoints';

const DOCUMENT = JSON.parse(
  readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8'),
) as Document & { paths: Record<string, Record<string, { responses: object }>> };

/** The last test's name: it walks what the tests before it did not call. */
const WALK = 'calls every other operation of the document through the client, with its examples';

const DOCUMENTED = Object.entries(DOCUMENT.paths).flatMap(([path, methods]) =>
  Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
);

/**
 * The generated client, as a script author uses it: the demo login, then every operation of the
 * document, typed end to end (no casts: a change to the document that breaks a call breaks the
 * type check).
 */
describe('the typed TypeScript client (clients/typescript)', () => {
  const t = useTestApp();
  const called = new Set<string>();
  let anonymous: BotManagementClient;
  let user: BotManagementClient;
  let token: string;

  const baseUrl = (): string => `http://127.0.0.1:${t().port}`;
  const guild_id = DEMO_IDS.community;
  /** Records each operation a client calls, as the document names it. */
  const recorder: Middleware = {
    onRequest({ request, schemaPath }) {
      called.add(`${request.method} ${schemaPath}`);
      return request;
    },
  };
  const client = (token?: string): BotManagementClient => {
    const api = createBotManagementClient({ baseUrl: baseUrl(), token });
    api.use(recorder);
    return api;
  };

  beforeAll(async () => {
    anonymous = client();
    const issued = await anonymous.GET('/demo/oauth2-code', { params: { query: {} } });
    if (!issued.data) throw new Error(`no demo code: ${issued.response.status}`);
    const login = await anonymous.POST('/oauth2', {
      body: { code: issued.data.code, redirect_uri: issued.data.redirect_uri },
    });
    if (!login.data) throw new Error(`no login: ${login.response.status}`);
    expect(login.data.user?.username).toBe('alice');
    token = login.data.token;
    user = client(token);
  });

  /** Whether the walk of the other operations ran (it does when the whole file runs). */
  let walked = false;
  /** How many of the tests that call operations by name ran (all, unless jest -t chose some). */
  let namedRan = 0;
  beforeEach(() => {
    if (!expect.getState().currentTestName?.includes(WALK)) namedRan += 1;
  });

  afterAll(() => {
    // Every operation of the document went through the client.
    if (walked) expect([...called].sort()).toEqual([...DOCUMENTED].sort());
  });

  it('reads the public operations', async () => {
    const config = await anonymous.GET('/config');
    expect(config.data?.main_server).toBe(DEMO_IDS.community);
    const live = await anonymous.GET('/healthz');
    expect(live.data?.status).toBe('ok');
    const ready = await anonymous.GET('/readyz');
    expect(ready.data?.checks.database).toBe('up');
    const stats = await anonymous.GET('/bot-stats');
    expect(stats.data?.total_guilds).toEqual(expect.any(Number));
    const state = await anonymous.GET('/bot-state', { params: { header: {} } });
    expect(state.data?.commands.length).toBeGreaterThan(0);
  });

  it('manages sessions and API tokens', async () => {
    const me = await user.GET('/sessions/@me');
    expect(me.data?.user_id).toBe(DEMO_IDS.alice);
    const created = await user.POST('/sessions', {
      body: { name: 'typed client', type: 'api', expiry: 3600 },
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.user).toBeNull();
    const list = await user.GET('/sessions');
    const ids = list.data?.sessions.map((session) => session.id) ?? [];
    expect(ids).toContain(created.data?.session_id);

    // The API token reports a shard: the default demo login is a root user.
    const script = client(created.data?.token);
    const shard = await script.PUT('/internal/shards/{shard_id}', {
      params: { path: { shard_id: 0 } },
      body: SHARD_REPORT,
    });
    expect(shard.data?.status).toBe('Ready');
    // The membership feed, as the bot's processes report it (the demo bot already has).
    const part = await script.PUT('/internal/shards/{shard_id}/guilds', {
      params: { path: { shard_id: 0 } },
      body: {
        shard_count: 1,
        snapshot_at: new Date().toISOString(),
        total: 2,
        guild_ids: [guild_id, DEMO_IDS.botLab],
      },
    });
    expect(part.data?.complete).toBe(true);
    const batch = await script.POST('/internal/shards/{shard_id}/guild-events', {
      params: { path: { shard_id: 0 } },
      body: { events: [] },
    });
    expect(batch.data).toEqual({ applied: 0, ignored: 0 });
    const feed = await script.GET('/internal/bot-guilds');
    expect(feed.data?.live).toBe(true);
    const heartbeat = await script.POST('/internal/shards/{shard_id}/guild-state', {
      params: { path: { shard_id: 0 } },
      body: { stream: { id: 'typed-client', started_at: new Date().toISOString() }, reports: [] },
    });
    expect(heartbeat.data).toEqual({
      applied: 0,
      duplicates: 0,
      next_seq: 1,
      gap: null,
      resync: [],
    });
    const states = await script.GET('/internal/guild-state');
    expect(states.data?.guilds).toBe(2);
    // The bot records a moderation case; the guild's owner reads it back.
    const recorded = await script.POST('/guilds/{guild_id}/cases', {
      params: { path: { guild_id } },
      body: { user_id: DEMO_IDS.bob, moderator_id: DEMO_IDS.demoUser, action: 'warn' },
    });
    expect(recorded.data?.number).toBe(1);
    const cases = await user.GET('/guilds/{guild_id}/cases', {
      params: { path: { guild_id }, query: { user_id: DEMO_IDS.bob } },
    });
    expect(cases.data?.cases.map((c) => c.action)).toEqual(['warn']);

    const revoked = await user.DELETE('/sessions/{session_id}', {
      params: { path: { session_id: created.data?.session_id ?? '' } },
    });
    expect(revoked.response.status).toBe(204);
    // A refusal comes back typed as the API's error.
    const again = await user.DELETE('/sessions/{session_id}', {
      params: { path: { session_id: created.data?.session_id ?? '' } },
    });
    expect(again.error?.code).toBe('NotFound');
  });

  it('opens the event streams, read as streams', async () => {
    /** The stream's first event (its opening one), then the stream is closed. */
    const firstEvent = async (
      body: ReadableStream<Uint8Array> | null | undefined,
    ): Promise<string> => {
      if (!body) throw new Error('no stream');
      const reader = body.getReader();
      let text = '';
      // Past the opening comment: up to the end of the first event with data.
      while (!/data: .*\n\n/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      await reader.cancel();
      return text;
    };
    const guild = await user.GET('/guilds/{guild_id}/events', {
      params: { path: { guild_id }, header: {} },
      parseAs: 'stream',
    });
    expect(guild.response.headers.get('content-type')).toBe('text/event-stream');
    expect(await firstEvent(guild.response.body)).toMatch(/event: ready\nid: \d+\n/);
    const bot = await anonymous.GET('/bot-stats/events', {
      params: { header: { 'Last-Event-ID': '0' } },
      parseAs: 'stream',
    });
    expect(await firstEvent(bot.response.body)).toMatch(/event: (stats|shard|totals)\n/);
  });

  it("reads the user's guilds", async () => {
    const guilds = await user.GET('/users/@me/guilds', { params: { query: { refresh: true } } });
    expect(guilds.data?.guilds.map((guild) => guild.id)).toContain(guild_id);
    const info = await user.GET('/users/@me/guilds/{guild_id}', {
      params: { path: { guild_id } },
    });
    expect(info.data?.owner_id).toBe(DEMO_IDS.alice);
  });

  it('runs settings operations', async () => {
    const schemas = await user.GET('/guilds/{guild_id}/settings', {
      params: { path: { guild_id } },
    });
    expect(Object.keys(schemas.data ?? {})).toContain('permissions');
    const path = { params: { path: { guild_id } } };
    const created = await user.POST('/guilds/{guild_id}/settings', {
      ...path,
      body: {
        setting: 'guildroles',
        operation: 'Create',
        fields: { role_id: '1100000000000000104', perms: ['guildroles.view'], index: 1 },
      },
    });
    expect(created.data?.data).toMatchObject({ role_id: '1100000000000000104' });
    const view = await user.POST('/guilds/{guild_id}/settings', {
      ...path,
      body: { setting: 'guildroles', operation: 'View', fields: { limit: 25 } },
    });
    expect(view.data?.data).toEqual([expect.objectContaining({ role_id: '1100000000000000104' })]);
    const reordered = await user.POST('/guilds/{guild_id}/settings', {
      ...path,
      body: {
        setting: 'guildroles',
        operation: 'Reorder',
        fields: [{ role_id: '1100000000000000104', index: 2 }],
      },
    });
    expect(reordered.data?.data).toEqual([expect.objectContaining({ index: 2 })]);
    const deleted = await user.POST('/guilds/{guild_id}/settings', {
      ...path,
      body: {
        setting: 'guildroles',
        operation: 'Delete',
        fields: { role_id: '1100000000000000104' },
      },
    });
    expect(deleted.error).toBeUndefined();

    const trail = await user.GET('/guilds/{guild_id}/settings/revisions', {
      params: { path: { guild_id }, query: { setting: 'guildroles', limit: 2 } },
    });
    expect(trail.data?.revisions.map((r) => r.operation)).toEqual(['Delete', 'Reorder']);
    expect(trail.data?.next_cursor).toEqual(expect.any(String));
    const deletion = trail.data?.revisions[0].revision ?? 0;
    const reverted = await user.POST('/guilds/{guild_id}/settings/revisions/{revision}/revert', {
      params: { path: { guild_id, revision: deletion } },
    });
    expect(reverted.data?.revisions.map((r) => [r.operation, r.reverts])).toEqual([
      ['Create', deletion],
    ]);
    const restored = await user.POST('/guilds/{guild_id}/settings/revisions/{revision}/restore', {
      params: { path: { guild_id, revision: reverted.data?.revisions[0].revision ?? 0 } },
    });
    expect(restored.data).toEqual({ revisions: [] });
    const exported = await user.GET('/guilds/{guild_id}/settings/export', path);
    if (!exported.data) throw new Error(`export failed: ${exported.error?.message}`);
    expect(exported.data.settings.guildroles).toContainEqual({
      role_id: '1100000000000000104',
      perms: ['guildroles.view'],
      index: 2,
    });
    const imported = await user.POST('/guilds/{guild_id}/settings/import', {
      ...path,
      body: { document: exported.data, dry_run: true },
    });
    expect(imported.data?.settings.guildroles.unchanged).toContainEqual({
      role_id: '1100000000000000104',
    });

    // The settings helper runs the same operation, its fields typed by the setting named first.
    const filters: SettingFields<'guildroles', 'View'> = { role_id: '1100000000000000104' };
    const helped = await user.settings(guild_id, 'guildroles', 'View', filters);
    expect(helped.data?.data).toEqual([
      expect.objectContaining({ role_id: '1100000000000000104', index: 2 }),
    ]);

    // The body is typed per setting and operation: what the server refuses does not compile.
    const unknownSetting = await user.POST('/guilds/{guild_id}/settings', {
      ...path,
      // @ts-expect-error: the document names every setting; this is not one of them.
      body: { setting: 'no_such_setting', operation: 'View', fields: {} },
    });
    expect(unknownSetting.error?.code).toBe('NotFound');
    const unknownField = await user.POST('/guilds/{guild_id}/settings', {
      ...path,
      body: {
        setting: 'guildroles',
        operation: 'Create',
        // @ts-expect-error: guildroles has no `colour` column.
        fields: { role_id: '1100000000000000104', perms: [], index: 1, colour: 'red' },
      },
    });
    expect(unknownField.error?.code).toBe('BadRequest');
    const notOffered = await user.POST('/guilds/{guild_id}/settings', {
      ...path,
      // @ts-expect-error: settings_history offers View only.
      body: { setting: 'settings_history', operation: 'Delete', fields: {} },
    });
    expect(notOffered.error?.code).toBe('BadRequest');
    const misspelt = await user.settings(guild_id, 'guildroles', 'View', {
      // @ts-expect-error: guildroles' View takes `limit`; the compiler suggests it.
      limt: 25,
    });
    expect(misspelt.error?.code).toBe('BadRequest');
    // @ts-expect-error: settings_history offers View only.
    const refused = await user.settings(guild_id, 'settings_history', 'Delete', {});
    expect(refused.error?.code).toBe('BadRequest');
    // @ts-expect-error: the document names every setting; this is not one of them.
    const unknown = await user.settings(guild_id, 'no_such_setting', 'View', {});
    expect(unknown.error?.code).toBe('NotFound');
    const incomplete = await user.settings(
      guild_id,
      'guildroles',
      'Create',
      // @ts-expect-error: a guildroles entry needs its `index`.
      { role_id: '1100000000000000105', perms: [] },
    );
    expect(incomplete.error?.code).toBe('BadRequest');
  });
  /**
   * Run last (tests run in order): an operation the tests above do not call by name, a route added
   * since, goes through the client too, untyped, with the document's examples (as the robustness
   * sweep builds them), and must get an answer its route documents.
   */
  it(WALK, async () => {
    if (namedRan === 0) {
      // Run on its own (jest -t): it walks what the tests above call, which need more than examples.
      console.warn('The walk of the other operations runs with the whole file; skipped');
      return;
    }
    walked = true;
    const created = await user.POST('/sessions', {
      body: { name: 'other operations', type: 'api', expiry: 3600 },
    });
    const root = client(created.data?.token);
    type Untyped = (
      method: string,
      path: string,
      init: object,
    ) => Promise<{ response: Response; data?: unknown }>;
    const request = (api: BotManagementClient): Untyped => api.request as unknown as Untyped;
    for (const route of DOCUMENTED.filter((documented) => !called.has(documented))) {
      const [method, path] = route.split(' ') as [string, string];
      const endpoint = derivedEndpoint(DOCUMENT, path, method.toLowerCase());
      const names = [...path.matchAll(/\{([a-z_]+)\}/g)].map((match) => match[1]);
      const pathParams = Object.fromEntries(
        names.map((name, i) => [name, i === 0 ? endpoint.param?.valid : endpoint.fixed?.[name]]),
      );
      const query = Object.fromEntries(
        Object.entries(endpoint.query ?? {}).map(([name, spec]) => [name, spec.valid]),
      );
      const body = endpoint.body
        ? Object.fromEntries(
            Object.entries(endpoint.body).map(([name, spec]) => [name, spec.valid]),
          )
        : undefined;
      const caller = { public: anonymous, login: user, 'root-api': root }[endpoint.caller];
      const { response, data } = await request(caller)(method.toLowerCase(), path, {
        params: { path: pathParams, query },
        body,
        // An event stream never ends: only its status is read.
        parseAs: 'stream',
      });
      // A success's body is handed over unread (an error's is read as the error).
      if (data instanceof ReadableStream) await data.cancel();
      const documented = Object.keys(DOCUMENT.paths[path]?.[method.toLowerCase()]?.responses ?? {});
      expect({ route, documented: documented.includes(String(response.status)) }).toEqual({
        route,
        documented: true,
      });
    }
  });
});
