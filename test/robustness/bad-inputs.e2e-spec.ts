import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ALTERNATE_STATUSES, ERROR_STATUS, ErrorCode } from 'src/common/errors/error-code';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { SettingsRegistry } from 'src/settings/schema/settings-registry';
import {
  badAuthorizations,
  badInputs,
  BAD_SNOWFLAKES,
  BAD_UUIDS,
  buildRequest,
  INJECTIONS,
  queryJunk,
  LONG_AND_CONTROL,
  type Json,
  STRING_ABUSE,
  type Caller,
  type Endpoint,
} from 'test/robustness/bad-input-cases';
import {
  derivedEndpoint,
  type Document,
  type DocumentOperation,
} from 'test/robustness/derived-endpoints';
import { createApiToken, databaseOf, loginAs } from 'test/support/auth';
import { rawRequest, type RawRequest, type RawResponse } from 'test/support/raw-http';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { actor, SINK_FIELDS, ok } from 'test/support/demo-world';

const ROOT = DEMO_IDS.demoUser;
const GUILD = DEMO_IDS.community;
const REDIRECT = 'http://localhost:3000/docs/oauth2-redirect.html';
const SESSION_ID = '00000000-0000-4000-8000-000000000000';
/** An export document with no settings: importing it changes nothing. */
const EXPORT_DOCUMENT = {
  format: 'bot-management-service/settings',
  version: 1,
  guild_id: GUILD,
  exported_at: '2026-11-24T00:00:00.000Z',
  revision: 0,
  settings: {},
};

/** Every route of the API with a request it accepts; every bad input is derived from these. */
/** When the bot reports it saw something: now, as the tests start (reports must be recent). */
const REPORTED_AT = new Date().toISOString();

const ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: '/config', caller: 'public' },
  { method: 'GET', path: '/healthz', caller: 'public' },
  { method: 'GET', path: '/readyz', caller: 'public' },
  { method: 'GET', path: '/bot-stats', caller: 'public' },
  { method: 'GET', path: '/bot-stats/events', caller: 'public', stream: true },
  { method: 'GET', path: '/bot-state', caller: 'public' },
  {
    method: 'GET',
    path: '/demo/oauth2-code',
    caller: 'public',
    query: {
      user_id: { valid: ROOT, invalid: ['abc', '-1', '1.5', '1'.repeat(21), INJECTIONS[0]] },
    },
  },
  {
    method: 'POST',
    path: '/oauth2',
    caller: 'public',
    body: {
      code: { valid: 'never-issued-code', invalid: ['', 'ab', 'x'.repeat(257), ...STRING_ABUSE] },
      redirect_uri: {
        valid: REDIRECT,
        // Outside the allow-list: 403 Restricted.
        codes: ['BadRequest', 'Restricted'],
        invalid: [
          '',
          'http://evil.example/cb',
          'http://localhost:3000/docs/oauth2-redirect.html?x=1',
          'javascript:alert(1)',
          ...STRING_ABUSE,
        ],
      },
    },
  },
  { method: 'GET', path: '/sessions/@me', caller: 'login' },
  { method: 'GET', path: '/sessions', caller: 'login' },
  {
    method: 'POST',
    path: '/sessions',
    caller: 'login',
    body: {
      name: {
        valid: 'robustness',
        invalid: ['', 'x'.repeat(65), 'tab\there', 'nul\u0000', ...LONG_AND_CONTROL],
      },
      type: { valid: 'api', invalid: ['login', 'API', '', ...INJECTIONS] },
      expiry: { valid: 3600, invalid: [59, 0, -1, 1.5, 1e300, 2 ** 53] },
    },
  },
  {
    method: 'DELETE',
    path: '/sessions/{session_id}',
    caller: 'login',
    param: { valid: SESSION_ID, invalid: BAD_UUIDS },
  },
  {
    method: 'GET',
    path: '/users/@me/guilds',
    caller: 'login',
    query: { refresh: { valid: 'false', invalid: ['yes', '1', 'TRUE', INJECTIONS[0]] } },
  },
  {
    method: 'GET',
    path: '/users/@me/guilds/{guild_id}',
    caller: 'login',
    param: { valid: GUILD, invalid: BAD_SNOWFLAKES },
  },
  {
    method: 'GET',
    path: '/guilds/{guild_id}/settings',
    caller: 'login',
    param: { valid: GUILD, invalid: BAD_SNOWFLAKES },
  },
  {
    method: 'GET',
    path: '/guilds/{guild_id}/events',
    caller: 'login',
    param: { valid: GUILD, invalid: BAD_SNOWFLAKES },
    stream: true,
  },
  {
    method: 'GET',
    path: '/guilds/{guild_id}/settings/export',
    caller: 'login',
    param: { valid: GUILD, invalid: BAD_SNOWFLAKES },
  },
  {
    method: 'POST',
    path: '/guilds/{guild_id}/settings/import',
    caller: 'login',
    param: { valid: GUILD, invalid: BAD_SNOWFLAKES },
    body: {
      document: {
        valid: EXPORT_DOCUMENT,
        invalid: [
          {},
          { ...EXPORT_DOCUMENT, format: 'other' },
          { ...EXPORT_DOCUMENT, version: 2 },
          { ...EXPORT_DOCUMENT, guild_id: '007' },
          { ...EXPORT_DOCUMENT, revision: -1 },
          { ...EXPORT_DOCUMENT, settings: { guildroles: {} } },
          { ...EXPORT_DOCUMENT, settings: { guildroles: ['x'] } },
          { ...EXPORT_DOCUMENT, extra: true },
        ],
      },
      // Optional; null, like absence, means the default.
      dry_run: { valid: true, optional: true, nullable: true },
      mapping: {
        valid: { roles: {} },
        optional: true,
        nullable: true,
        invalid: [{ roles: { a: '1' } }, { roles: { '1': 2 } }, { teams: {} }, { roles: [] }],
      },
    },
  },
  ...(['revert', 'restore'] as const).map((action): Endpoint => ({
    method: 'POST',
    path: `/guilds/{guild_id}/settings/revisions/{revision}/${action}`,
    caller: 'login',
    fixed: { guild_id: GUILD },
    param: {
      valid: '999999',
      invalid: ['0', '-1', '01', '1.5', '1e3', 'abc', '2147483648', '%zz'],
    },
  })),
  {
    method: 'GET',
    path: '/guilds/{guild_id}/settings/revisions',
    caller: 'login',
    param: { valid: GUILD, invalid: BAD_SNOWFLAKES },
    query: {
      setting: {
        valid: 'guildroles',
        invalid: [
          '',
          'x'.repeat(65),
          'nope',
          'GUILDROLES',
          'constructor',
          '\u0000',
          'guildroles\u0000',
        ],
      },
      key: {
        // Query values are sent as written: URL-encoded here.
        valid: encodeURIComponent('{"role_id":"1100000000000000104"}'),
        invalid: [
          '',
          'role_id',
          '[1]',
          'null',
          '"x"',
          `{"a":"${'x'.repeat(1000)}"}`,
          INJECTIONS[0],
          // JSON escapes that parse into text jsonb refuses.
          '{"role_id":"\\u0000"}',
          '{"role_id":"\\ud800"}',
          '{"role_id\\udc00":"1"}',
          '{"role_id":"\u0000"}',
        ],
      },
      author: {
        valid: ROOT,
        invalid: ['abc', '-1', '007', '1.5', '1'.repeat(21), encodeURIComponent(INJECTIONS[0])],
      },
      session_id: {
        valid: SESSION_ID,
        invalid: ['abc', '1', '{}', encodeURIComponent(INJECTIONS[0])],
      },
      operation: {
        valid: 'Update',
        invalid: ['View', 'update', '', encodeURIComponent(INJECTIONS[0])],
      },
      since: {
        valid: '2026-01-01T00:00:00Z',
        invalid: [
          '',
          'now',
          '2026-13-01T00:00:00Z',
          '2026-01-01',
          '1e10',
          encodeURIComponent(INJECTIONS[0]),
        ],
      },
      until: { valid: '2027-01-01T00:00:00.000%2B02:00', invalid: ['', '2026-02-29T00:00:00Z'] },
      cursor: { valid: '1000', invalid: ['', '0', '-1', '01', '1.5', '1e3', '2147483648'] },
      limit: { valid: '10', invalid: ['', '0', '101', '+1', ' 1', 'NaN'] },
    },
  },
  {
    method: 'POST',
    path: '/guilds/{guild_id}/settings',
    caller: 'login',
    param: { valid: GUILD, invalid: BAD_SNOWFLAKES },
    body: {
      setting: {
        valid: 'auditlog_sinks',
        invalid: ['', 'nope', 'AUDITLOG_SINKS', ...STRING_ABUSE],
        codes: ['BadRequest', 'NotFound'],
      },
      operation: { valid: 'View', invalid: ['view', 'Reorder', 'Drop', '', ...INJECTIONS] },
      fields: {
        valid: {},
        invalid: [
          { limit: -1 },
          { limit: 101 },
          { limit: '10' },
          { offset: -1 },
          { channel: 'abc' },
          { channel: INJECTIONS[1] },
          { enabled: 'yes' },
          { unknown: 1 },
          JSON.parse('{"__proto__": {"polluted": true}}') as Json,
        ],
      },
    },
  },
  {
    method: 'PUT',
    path: '/internal/shards/{shard_id}/guilds',
    caller: 'root-api',
    param: { valid: '0', invalid: ['abc', '-1', '1.5', '007', '65536', '%zz', '1'.repeat(120)] },
    body: {
      shard_count: { valid: 1, invalid: [0, -1, 1.5, 65_537, 1e300] },
      snapshot_at: {
        valid: REPORTED_AT,
        invalid: ['yesterday', '', '2026-13-01T00:00:00Z', '1999-01-01T00:00:00Z', ...INJECTIONS],
      },
      total: { valid: 1, invalid: [-1, 1.5, 1_000_001] },
      guild_ids: {
        valid: [DEMO_IDS.community],
        invalid: [
          ['abc'],
          [''],
          ['1'.repeat(21)],
          [1],
          [INJECTIONS[0]],
          [DEMO_IDS.community, DEMO_IDS.botLab],
          Array.from({ length: 4_001 }, (_, i) => String(i + 1)),
        ],
      },
    },
  },
  {
    method: 'POST',
    path: '/internal/shards/{shard_id}/guild-events',
    caller: 'root-api',
    param: { valid: '0', invalid: ['abc', '-1', '65536', '%zz'] },
    body: {
      events: {
        valid: [{ type: 'join', guild_id: DEMO_IDS.community, at: REPORTED_AT }],
        invalid: [
          [{ type: 'gone', guild_id: DEMO_IDS.community, at: REPORTED_AT }],
          [{ type: 'join', guild_id: 'abc', at: REPORTED_AT }],
          [{ type: 'join', guild_id: DEMO_IDS.community, at: 'now' }],
          [{ type: 'join', guild_id: DEMO_IDS.community }],
          [{ type: 'join', guild_id: DEMO_IDS.community, at: REPORTED_AT, extra: 1 }],
          [1],
          ['join'],
          [null],
          Array.from({ length: 1_001 }, () => ({
            type: 'join',
            guild_id: DEMO_IDS.community,
            at: REPORTED_AT,
          })),
        ],
      },
    },
  },
  { method: 'GET', path: '/internal/bot-guilds', caller: 'root-api' },
  {
    method: 'POST',
    path: '/internal/shards/{shard_id}/guild-state',
    caller: 'root-api',
    param: { valid: '0', invalid: ['abc', '-1', '65536', '%zz'] },
    body: {
      stream: {
        // Newer than the demo bot's stream, which it replaces.
        valid: { id: 'bad-inputs', started_at: new Date(Date.now() + 60_000).toISOString() },
        invalid: [
          { id: '', started_at: REPORTED_AT },
          { id: 'a b', started_at: REPORTED_AT },
          { id: 'x'.repeat(65), started_at: REPORTED_AT },
          { id: 'bad-inputs', started_at: 'now' },
          { id: 'bad-inputs' },
          { id: 'bad-inputs', started_at: REPORTED_AT, extra: 1 },
          'stream',
          null,
        ],
      },
      reports: {
        valid: [],
        invalid: [
          [{ seq: 1, type: 'gone', guild_id: DEMO_IDS.community, at: REPORTED_AT }],
          [
            {
              seq: 0,
              type: 'role_delete',
              guild_id: DEMO_IDS.community,
              at: REPORTED_AT,
              role_id: '1',
            },
          ],
          [
            {
              seq: 1.5,
              type: 'role_delete',
              guild_id: DEMO_IDS.community,
              at: REPORTED_AT,
              role_id: '1',
            },
          ],
          [{ seq: 1, type: 'role_delete', guild_id: 'abc', at: REPORTED_AT, role_id: '1' }],
          [{ seq: 1, type: 'role_delete', guild_id: DEMO_IDS.community, at: 'now', role_id: '1' }],
          [{ seq: 1, type: 'role_delete', guild_id: DEMO_IDS.community, at: REPORTED_AT }],
          [
            {
              seq: 1,
              type: 'role_delete',
              guild_id: DEMO_IDS.community,
              at: REPORTED_AT,
              role_id: '1',
              hash: 'x',
            },
          ],
          [
            {
              seq: 1,
              type: 'role_delete',
              guild_id: DEMO_IDS.community,
              at: REPORTED_AT,
              role_id: '1',
              extra: 1,
            },
          ],
          [
            {
              seq: 1,
              type: 'guild_create',
              guild_id: DEMO_IDS.community,
              at: REPORTED_AT,
              guild: { id: DEMO_IDS.community },
            },
          ],
          [
            {
              seq: 1,
              type: 'channel_upsert',
              guild_id: DEMO_IDS.community,
              at: REPORTED_AT,
              channel: {
                id: '1',
                type: 999,
                name: null,
                position: 0,
                parent_id: null,
                flags: 0,
                permission_overwrites: [],
              },
            },
          ],
          [
            {
              seq: 1,
              type: 'bot_member_update',
              guild_id: DEMO_IDS.community,
              at: REPORTED_AT,
              member: { user_id: '1', roles: ['x'], communication_disabled_until: null },
            },
          ],
          [1],
          [null],
          Array.from({ length: 1_001 }, (_, i) => ({
            seq: i + 1,
            type: 'role_delete',
            guild_id: DEMO_IDS.community,
            at: REPORTED_AT,
            role_id: '1',
          })),
        ],
      },
    },
  },
  { method: 'GET', path: '/internal/guild-state', caller: 'root-api' },
  {
    method: 'PUT',
    path: '/internal/shards/{shard_id}',
    caller: 'root-api',
    param: {
      valid: '0',
      invalid: [
        'abc',
        '-1',
        '1.5',
        '007',
        '1e3',
        '65536',
        '99999999999',
        '%201',
        '%zz',
        '1'.repeat(120),
      ],
    },
    body: {
      status: { valid: 'Ready', invalid: ['Unknown', 'ready', '', ...INJECTIONS] },
      real_latency: { valid: 42, nullable: true, invalid: [-1, 1.5, 1e12] },
      guilds: { valid: 1200, invalid: [-1, 1.5, 2 ** 60] },
      users: { valid: 50_000, invalid: [-1, 2 ** 60] },
      uptime: { valid: 3600, invalid: [-1, 0.5] },
      total_uptime: { valid: 86_400, invalid: [-1, 1e300] },
    },
  },
];

interface OpenApiOperation extends DocumentOperation {
  responses: Record<string, { content?: { 'application/json'?: { examples?: object } } }>;
}
const OPENAPI = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, OpenApiOperation>>;
} & Document;

/** The permissions routes declare (`@RequirePermission`), which the sweep's caller is given. */
const ROUTE_PERMISSIONS = [
  ...new Set(
    Object.values(OPENAPI.paths).flatMap((methods) =>
      Object.values(methods).flatMap((operation) => operation['x-required-permission'] ?? []),
    ),
  ),
];

/**
 * Every route of the document: the table's entries, and for a route the table does not list, one
 * read from the document (`derivedEndpoint`), so that a new route is swept without a line here.
 */
const LISTED = new Set(ENDPOINTS.map(label));
const SWEPT: Endpoint[] = [
  ...ENDPOINTS,
  ...Object.entries(OPENAPI.paths).flatMap(([path, methods]) =>
    Object.keys(methods)
      .filter((method) => !LISTED.has(`${method.toUpperCase()} ${path}`))
      .map((method) => derivedEndpoint(OPENAPI, path, method)),
  ),
];

/** The error codes a route documents, by status. */
function documentedCodes(endpoint: Endpoint): Map<number, string[]> {
  const operation = OPENAPI.paths[endpoint.path]?.[endpoint.method.toLowerCase()];
  if (!operation) throw new Error(`${endpoint.method} ${endpoint.path} is not in openapi.json`);
  return new Map(
    Object.entries(operation.responses).map(([status, response]) => [
      Number(status),
      Object.keys(response.content?.['application/json']?.examples ?? {}),
    ]),
  );
}

/**
 * The query parameters a route declares, from the OpenAPI document (openapi:check keeps it equal
 * to the one the service serves): a new parameter is covered without touching this file.
 */
function declaredQuery(endpoint: Endpoint): string[] {
  const operation = OPENAPI.paths[endpoint.path]?.[endpoint.method.toLowerCase()];
  return (operation?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
}

function statusesOf(code: ErrorCode): number[] {
  return [ERROR_STATUS[code], ...(ALTERNATE_STATUSES[code] ?? [])];
}

function label(endpoint: Endpoint): string {
  return `${endpoint.method} ${endpoint.path}`;
}

describe('robustness: bad inputs on every route', () => {
  // The demo bot reports its shard every quarter of BOT_FEED_STALE_AFTER (30 s by default), a
  // write of its own that the snapshot would see: at most every 15 minutes here.
  const t = useTestApp({ env: { ROOT_USERS: ROOT, BOT_FEED_STALE_AFTER: '3600' } });
  const tokens: Partial<Record<Caller, string>> = {};
  let before: TableSnapshot;

  beforeAll(async () => {
    const login = await loginAs(t(), ROOT);
    tokens.login = `Bearer ${login.token}`;
    tokens['root-api'] = (await createApiToken(t(), login.token, { name: 'shard reporter' })).token;
    await seedData(t(), tokens);
    before = await snapshot(t());
  });

  it('sweeps every route of openapi.json, and lists none that is not one', () => {
    const documented = Object.entries(OPENAPI.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(SWEPT.map(label).sort()).toEqual(documented.sort());
    expect(ENDPOINTS.map(label).filter((route) => !documented.includes(route))).toEqual([]);
  });

  describe.each(SWEPT.map((endpoint) => [label(endpoint), endpoint] as const))(
    '%s',
    (_name, endpoint) => {
      const cases = [
        ...badInputs(endpoint),
        ...(endpoint.caller === 'public' ? [] : badAuthorizations(endpoint)),
      ];
      if (cases.length === 0) {
        it('has no input to abuse but its URL', async () => {
          const res = await rawRequest(t().port, {
            method: endpoint.method,
            path: `${endpoint.path}%zz`,
          });
          expectRefused(res, ['BadRequest', 'NotFound'], null);
        });
        return;
      }
      it.each(cases.map((input) => [input.label, input] as const))('%s', async (_label, input) => {
        const isAuthCase = input.codes.includes('NoAuthToken');
        const request = isAuthCase ? input.request : authorize(input.request, endpoint, tokens);
        const res = await rawRequest(t().port, request);
        expectRefused(res, input.codes, documentedCodes(endpoint));
      });
    },
  );

  describe.each(SWEPT.map((endpoint) => [label(endpoint), endpoint] as const))(
    '%s: junk in every query parameter',
    (_name, endpoint) => {
      it.each(
        queryJunk(endpoint, declaredQuery(endpoint)).map((input) => [input.label, input] as const),
      )('%s', async (_label, input) => {
        const request = authorize(input.request, endpoint, tokens);
        const res = await rawRequest(t().port, { ...request, headersOnly: endpoint.stream });
        expect({ status: res.status, body: res.json }).toMatchObject({
          status: input.mayPass ? expect.any(Number) : 400,
        });
        expect(res.status).toBeLessThan(500);
        // A stream's answer is read to its head only.
        if (res.status >= 400 && !endpoint.stream) {
          expectRefused(res, input.codes, documentedCodes(endpoint));
        }
      });
    },
  );

  it('logged no error while refusing them', () => {
    const errors = t().logs.lines.filter((line) => Number(line.level) >= 50);
    expect(errors).toEqual([]);
  });

  it('left the data created before the run intact', async () => {
    expect(await snapshot(t())).toEqual(before);
    const sessions = await t()
      .http()
      .get('/sessions')
      .set('Authorization', tokens.login!)
      .expect(200);
    expect(sessions.body.sessions).toHaveLength(2);
  });

  it.each(SWEPT.map((endpoint) => [label(endpoint), endpoint] as const))(
    "%s accepts the table's base request (run last: it writes)",
    async (_name, endpoint) => {
      const request = authorize(await baseRequest(t(), endpoint), endpoint, tokens);
      const res = await rawRequest(t().port, { ...request, headersOnly: endpoint.stream });
      // The bases are valid in form: unknown-but-well-formed ids may be 404, never 400 or 500.
      expect([200, 201, 204, 404]).toContain(res.status);
    },
  );
});

describe('robustness: odd but valid strings', () => {
  const t = useTestApp();

  it.each([...INJECTIONS, 'Zalgo̸̢͓ 名前 💥🇫🇷 \u202e', 'O\'Brien "quoted" \\ backslash'])(
    'stores the session name %j verbatim',
    async (name) => {
      const login = await loginAs(t());
      const created = await createApiToken(t(), login.token, { name });
      const listed = await t()
        .http()
        .get('/sessions')
        .set('Authorization', login.token)
        .expect(200);
      const session = (listed.body.sessions as { id: string; name: string }[]).find(
        (s) => s.id === created.sessionId,
      );
      expect(session?.name).toBe(name);
      const [row] = await databaseOf(t()).query<{ name: string }[]>(
        'SELECT name FROM sessions WHERE id = $1',
        [created.sessionId],
      );
      expect(row.name).toBe(name);
    },
  );
});

describe('robustness: query strings the database would refuse', () => {
  const t = useTestApp({ env: { ROOT_USERS: ROOT } });
  const revisions = `/guilds/${GUILD}/settings/revisions`;
  const NUL = 'must not contain the NUL character (\\u0000)';
  const SURROGATE = 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)';
  let token: string;

  beforeAll(async () => {
    token = `Bearer ${(await loginAs(t(), ROOT)).token}`;
  });

  const refusal = (field: string, message: string): object => ({
    status: 400,
    body: {
      message: `Invalid request: ${message}`,
      code: 'BadRequest',
      details: [{ field, message }],
    },
  });

  it.each([
    ['setting holding NUL', `${revisions}?setting=%00`, refusal('setting', `setting ${NUL}`)],
    ['a parameter no route reads', '/config?x=a%00', refusal('x', `x ${NUL}`)],
    [
      'key whose JSON escapes make NUL',
      `${revisions}?setting=guildroles&key=${encodeURIComponent('{"role_id":"\\u0000"}')}`,
      refusal('key', `key.role_id ${NUL}`),
    ],
    [
      'key whose JSON escapes make a lone surrogate',
      `${revisions}?setting=guildroles&key=${encodeURIComponent('{"role_id":"\\ud800"}')}`,
      refusal('key', `key.role_id ${SURROGATE}`),
    ],
    [
      'a setting that is not declared',
      `${revisions}?setting=nope`,
      // Every setting the application declares, as its registry has them.
      (): object =>
        refusal(
          'setting',
          `setting "nope" is not a declared setting; use one of ${declaredSettingIds(t()).join(', ')}`,
        ),
    ],
  ])('answers %s with 400 naming it, and logs no error', async (_name, path, expected) => {
    const res = await rawRequest(t().port, {
      method: 'GET',
      path,
      headers: { authorization: token },
    });
    expect({ status: res.status, body: res.json }).toEqual(
      typeof expected === 'function' ? (expected as () => object)() : expected,
    );
    expect(t().logs.lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });
});

describe('robustness: requests that never finish or cannot be parsed', () => {
  const t = useTestApp({ env: { HTTP_REQUEST_TIMEOUT_MS: '1000' } });

  it('answers a body that stops arriving with 400 BadRequest and closes the connection', async () => {
    const res = await rawRequest(t().port, {
      method: 'POST',
      path: '/oauth2',
      headers: { 'content-type': 'application/json' },
      body: '{"code": "abc',
      contentLength: 200,
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      message: 'The request was not received in full in time',
      code: 'BadRequest',
    });
    expect(res.headers.connection).toBe('close');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(res.elapsedMs).toBeLessThan(4_000);
  });

  it.each([
    ['POST', '/oauth2', '['],
    ['POST', '/sessions', '{"a":'],
    ['POST', `/guilds/${GUILD}/settings`, '['],
    ['PUT', '/internal/shards/0', '{"a":'],
  ])(
    'answers %s %s with JSON nested thousands deep (%s) with 400 naming the limit',
    async (method, path, open) => {
      // As deep as fits in the 100 KiB body limit.
      const [close, depth] = open === '[' ? [']', 30_000] : ['}', 15_000];
      const res = await rawRequest(t().port, {
        method,
        path,
        headers: { 'content-type': 'application/json' },
        body: `${open.repeat(depth)}1${close.repeat(depth)}`,
      });
      expect({ status: res.status, body: res.json }).toEqual({
        status: 400,
        body: {
          message: 'The JSON body is nested too deeply: at most 64 levels of arrays and objects',
          code: 'BadRequest',
        },
      });
      expect(t().logs.lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
    },
  );

  it('answers a string holding U+0000 with 400 naming the field and the character', async () => {
    const res = await rawRequest(t().port, {
      method: 'POST',
      path: '/oauth2',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"code": "abc\\u0000", "redirect_uri": "x"}',
    });
    expect({ status: res.status, body: res.json }).toEqual({
      status: 400,
      body: {
        message: 'Invalid request: code must not contain the NUL character (\\u0000)',
        code: 'BadRequest',
        details: [{ field: 'code', message: 'code must not contain the NUL character (\\u0000)' }],
      },
    });
  });

  it('keeps refusing prototype poisoning as Fastify does', async () => {
    const res = await rawRequest(t().port, {
      method: 'POST',
      path: '/oauth2',
      headers: { 'content-type': 'application/json' },
      body: '{"__proto__": {"x": 1}, "code": "abc", "redirect_uri": "x"}',
    });
    expect({ status: res.status, code: (res.json as { code: string }).code }).toEqual({
      status: 400,
      code: 'BadRequest',
    });
  });

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n', 'The request is malformed'],
    [
      'headers over the size limit',
      `GET /config HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'The request headers are too large',
    ],
    [
      'a bad Content-Length',
      'POST /oauth2 HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n',
      'The request is malformed',
    ],
  ])('answers %s with 400 BadRequest JSON', async (_name, wire, message) => {
    const answer = await sendWire(t(), wire);
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(body)).toEqual({ message, code: 'BadRequest' });
  });
});

/** Writes raw bytes on a new connection and returns everything the server sends before closing. */
function sendWire(t: TestApp, wire: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(t.port, '127.0.0.1', () => socket.write(wire));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 5 s'));
    }, 5_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** The route's base request; a login gets a code of its own, since codes are single-use. */
async function baseRequest(t: TestApp, endpoint: Endpoint): Promise<RawRequest> {
  if (endpoint.path !== '/oauth2') return buildRequest(endpoint);
  const issued = await t.http().get(`/demo/oauth2-code?user_id=${ROOT}`).expect(200);
  const body = JSON.stringify({ code: issued.body.code, redirect_uri: REDIRECT });
  return buildRequest(endpoint, { body });
}

function authorize(
  request: RawRequest,
  endpoint: Endpoint,
  tokens: Partial<Record<Caller, string>>,
): RawRequest {
  if (endpoint.caller === 'public') return request;
  return { ...request, headers: { ...request.headers, authorization: tokens[endpoint.caller] } };
}

/** A 4xx `{message, code}` JSON answer whose code is allowed for its status (and documented). */
function expectRefused(
  res: RawResponse,
  codes: string[],
  documented: Map<number, string[]> | null,
): void {
  const summary = { status: res.status, body: res.json ?? res.text.slice(0, 200) };
  expect(summary).toMatchObject({
    status: expect.any(Number),
    body: { message: expect.any(String), code: expect.any(String) },
  });
  const body = res.json as { message: string; code: ErrorCode; error_id?: string };
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(codes).toContain(body.code);
  expect(statusesOf(body.code)).toContain(res.status);
  if (documented && res.status !== 413)
    expect(documented.get(ERROR_STATUS[body.code])).toContain(body.code);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(body.message.length).toBeGreaterThan(0);
  expect(body.error_id).toBeUndefined();
}

/** The ids of every setting the running application declares (its registry), sorted. */
function declaredSettingIds(t: TestApp): string[] {
  return t.app
    .get(SettingsRegistry)
    .all()
    .map((setting) => setting.schema.id)
    .sort();
}

/** Data every route can see, created before the bad inputs. */
async function seedData(t: TestApp, tokens: Partial<Record<Caller, string>>): Promise<void> {
  const owner = await actor(t, DEMO_IDS.alice);
  ok(await owner.exec('auditlog_sinks', 'Create', SINK_FIELDS));
  ok(
    await owner.exec('guildmembers', 'Create', {
      user_id: ROOT,
      // And every permission a route declares (x-required-permission), so its inputs are read.
      perm_overrides: ['auditlog_sinks.view', 'settings_history.view', ...ROUTE_PERMISSIONS],
    }),
  );
  // A shard report: the PUT route's base request.
  const shards = ENDPOINTS.find((endpoint) => endpoint.method === 'PUT')!;
  expect((await rawRequest(t.port, authorize(buildRequest(shards), shards, tokens))).status).toBe(
    200,
  );
}

type TableSnapshot = Record<string, string[]>;

/** Every row of every table (except when a session was last used), in a stable order. */
async function snapshot(t: TestApp): Promise<TableSnapshot> {
  const database = databaseOf(t);
  const result: TableSnapshot = {};
  for (const metadata of database.entityMetadatas) {
    const rows = await database.query<Record<string, unknown>[]>(
      `SELECT * FROM "${metadata.tableName}"`,
    );
    result[metadata.tableName] = rows
      .map((row) => JSON.stringify({ ...row, last_used_at: undefined }))
      .sort();
  }
  return result;
}
