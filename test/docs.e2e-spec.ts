import { useTestApp } from 'test/support/test-app';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
  security?: Record<string, string[]>[];
  description?: string;
  parameters?: { name: string; in: string; example?: unknown; schema?: { example?: unknown } }[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
}

/** The only operations that may be called without a session. */
const PUBLIC_OPERATIONS = new Set([
  'GET /config',
  'GET /healthz',
  'GET /readyz',
  'POST /oauth2',
  'GET /demo/oauth2-code',
  'GET /bot-stats',
  'GET /bot-stats/events',
  'GET /bot-state',
]);

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function sortedRequirements(requirements: string[][]): string[][] {
  return requirements
    .map((names) => [...names].sort())
    .sort((a, b) => a.join().localeCompare(b.join()));
}

describe('API documentation', () => {
  const t = useTestApp();

  it('serves Swagger UI at /docs', async () => {
    const res = await t().http().get('/docs').redirects(1).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('swagger-ui');
    expect(res.text).toContain('<title>Bot Management Service API</title>');
  });

  it('leads from the root to the docs', async () => {
    const res = await t().http().get('/').expect(302);
    expect(res.headers.location).toBe('/docs');
    expect((await t().http().head('/')).status).toBe(302);
  });

  it("serves Swagger UI's assets", async () => {
    const res = await t().http().get('/docs/swagger-ui-init.js').expect(200);
    expect(res.text).toContain('openapi');
  });

  describe('GET /openapi.json', () => {
    let document: {
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, Operation>>;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    };

    beforeAll(async () => {
      const res = await t().http().get('/openapi.json').expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      document = res.body;
    });

    it('types the settings body per registered setting (built once the modules are up)', () => {
      expect(document.components.schemas).toHaveProperty('GuildrolesCreateRequest');
      expect(document.components.schemas).not.toHaveProperty('ExecuteSettingDto');
    });

    it('is an OpenAPI 3 document for version 0.2.0', () => {
      expect(document.openapi).toMatch(/^3\./);
      expect(document.info).toMatchObject({
        title: 'Bot Management Service API',
        version: '0.2.0',
      });
    });

    it('declares both security schemes', () => {
      expect(document.components.securitySchemes).toEqual({
        PublicAuth: expect.objectContaining({
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
        }),
        UserAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      });
    });

    it('puts the demo first and says in its intro how to try it', () => {
      const full = document as unknown as {
        tags: { name: string }[];
        info: { description: string };
      };
      expect(full.tags[0]?.name).toBe('demo');
      expect(full.info.description).toContain('GET /demo/oauth2-code');
      expect(full.info.description).toContain('Authorize');
    });

    // A person runs the prefilled login body with only the code replaced.
    it("logs in with POST /oauth2's prefilled body once only the code is replaced", async () => {
      const body = document.paths['/oauth2']?.post?.requestBody?.content['application/json'];
      const prefilled = Object.values(body?.examples ?? {})[0]?.value as Record<string, unknown>;
      expect(Object.keys(prefilled).sort()).toEqual(['code', 'redirect_uri']);
      const issued = await t().http().get('/demo/oauth2-code').expect(200);
      const login = await t()
        .http()
        .post('/oauth2')
        .send({ ...prefilled, code: issued.body.code });
      expect({ status: login.status, message: login.body.message }).toEqual({
        status: 200,
        message: undefined,
      });
    });

    it('lists the routes of this service', () => {
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining(['/config', '/healthz', '/readyz']),
      );
    });

    it('documents every error response with the error schema', () => {
      const errorResponses = Object.values(document.paths)
        .flatMap((methods) => Object.values(methods))
        .flatMap((operation) =>
          Object.entries(operation.responses).filter(([status]) => /^[45]\d\d$/.test(status)),
        );
      expect(errorResponses.length).toBeGreaterThan(0);
      for (const [status, response] of errorResponses) {
        const ref = response.content?.['application/json']?.schema?.$ref;
        const expected =
          status === '503'
            ? '#/components/schemas/NotReadyDto'
            : '#/components/schemas/ErrorResponseDto';
        expect({ status, ref }).toEqual({ status, ref: expected });
      }
      expect(document.components.schemas).toHaveProperty('ErrorResponseDto');
    });

    // Both header forms are accepted on every protected route, whatever session types it takes,
    // so every protected operation offers both schemes as alternatives, each once.
    it('declares both security schemes on every operation but the public allow-list', () => {
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          const key = `${method.toUpperCase()} ${path}`;
          const requirements = (operation.security ?? []).map((entry) => Object.keys(entry));
          const expected = PUBLIC_OPERATIONS.has(key) ? [] : [['PublicAuth'], ['UserAuth']];
          expect({ key, requirements: sortedRequirements(requirements) }).toEqual({
            key,
            requirements: expected,
          });
        }
      }
    });

    it('reads the token in both documented forms on every protected operation', async () => {
      const unknown = `arl_${'A'.repeat(43)}`;
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const method of METHODS) {
          if (!methods[method] || PUBLIC_OPERATIONS.has(`${method.toUpperCase()} ${path}`))
            continue;
          const concrete = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
          for (const header of [`Bearer ${unknown}`, unknown]) {
            const res = await t().http()[method](concrete).set('Authorization', header).send({});
            expect({ route: `${method} ${path}`, header, code: res.body.code }).toEqual({
              route: `${method} ${path}`,
              header,
              code: 'InvalidToken',
            });
          }
        }
      }
    });

    it('refuses every operation off the allow-list without a token (401 NoAuthToken)', async () => {
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const method of METHODS) {
          if (!methods[method] || PUBLIC_OPERATIONS.has(`${method.toUpperCase()} ${path}`))
            continue;
          const concrete = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
          const res = await t().http()[method](concrete).send({});
          expect({ route: `${method} ${path}`, status: res.status, code: res.body.code }).toEqual({
            route: `${method} ${path}`,
            status: 401,
            code: 'NoAuthToken',
          });
        }
      }
    });

    it('documents each error status once, with an example of every code it names', () => {
      let checked = 0;
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          for (const [status, response] of Object.entries(operation.responses)) {
            const { description, content } = response as {
              description: string;
              content?: { 'application/json'?: { examples?: Record<string, unknown> } };
            };
            const examples = content?.['application/json']?.examples;
            // The error responses by code (the body-size 413 and /readyz's 503 are written out).
            if (Number(status) < 400 || !examples) continue;
            checked++;
            const named = /^Error: (\w+(?: or \w+)*)$/.exec(description)?.[1].split(' or ');
            expect({ path, method, status, named }).toEqual({
              path,
              method,
              status,
              named: Object.keys(examples),
            });
          }
        }
      }
      expect(checked).toBeGreaterThan(50);
    });

    it('documents a 500 on every operation', () => {
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          expect({ path, method, has500: '500' in operation.responses }).toEqual({
            path,
            method,
            has500: true,
          });
        }
      }
    });

    it('tells how to follow an event stream, and prefills nothing that would skip events', () => {
      const streams = Object.entries(document.paths).flatMap(([path, methods]) =>
        Object.entries(methods)
          .filter(
            ([, operation]) => 'text/event-stream' in (operation.responses['200']?.content ?? {}),
          )
          .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
      );
      expect(streams.map(({ route }) => route).sort()).toEqual([
        'GET /bot-stats/events',
        'GET /guilds/{guild_id}/events',
      ]);
      for (const { operation } of streams) {
        expect(operation.description).toMatch(/^Follow it with an `EventSource` or `curl -N`/);
        const lastEventId = operation.parameters?.find((p) => p.name === 'Last-Event-ID');
        expect(lastEventId).toMatchObject({ in: 'header' });
        expect(lastEventId?.example ?? lastEventId?.schema?.example).toBeUndefined();
      }
    });

    it('documents a 429 on every operation but the exempt probes', () => {
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          const exempt = path === '/healthz' || path === '/readyz';
          expect({ path, method, has429: '429' in operation.responses }).toEqual({
            path,
            method,
            has429: !exempt,
          });
        }
      }
    });
  });
});
