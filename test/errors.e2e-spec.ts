import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INTERNAL_DETAIL, ProbeController, QUERY_SECRET } from 'test/fixtures/probe.controller';
import { useTestApp } from 'test/support/test-app';

const ERROR_CODES = [
  'BadRequest',
  'NoAuthToken',
  'InvalidToken',
  'ApiBanned',
  'Restricted',
  'NotFound',
  'RateLimited',
  'InternalAuthError',
  'InternalError',
];

describe('error model (every error is {message, code} JSON)', () => {
  const t = useTestApp({ controllers: [ProbeController] });

  function expectErrorShape(body: Record<string, unknown>, code: string): void {
    expect(typeof body.message).toBe('string');
    expect((body.message as string).length).toBeGreaterThan(0);
    expect(body.code).toBe(code);
    expect(ERROR_CODES).toContain(body.code);
  }

  it('answers an unknown route with 404 NotFound', async () => {
    const res = await t().http().get('/no/such/route').expect(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectErrorShape(res.body, 'NotFound');
  });

  it('answers an unknown method on a known path with 404 NotFound', async () => {
    const res = await t().http().delete('/config').expect(404);
    expectErrorShape(res.body, 'NotFound');
  });

  it('refuses a malformed URL with 400 BadRequest', async () => {
    const res = await t().http().get('/config/%zz').expect(400);
    expectErrorShape(res.body, 'BadRequest');
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('refuses an over-long path parameter with 400 BadRequest', async () => {
    await t()
      .http()
      .get(`/__probe/items/${'1'.repeat(100)}`)
      .expect(200);
    const res = await t()
      .http()
      .get(`/__probe/items/${'1'.repeat(101)}`)
      .expect(400);
    expectErrorShape(res.body, 'BadRequest');
    expect(res.body.message).toBe('A path parameter is too long');
  });

  it('refuses malformed JSON with 400 BadRequest', async () => {
    const res = await t()
      .http()
      .post('/__probe/echo')
      .set('Content-Type', 'application/json')
      .send('{"name": "a", "count": ')
      .expect(400);
    expectErrorShape(res.body, 'BadRequest');
    expect(res.body.message).toMatch(/JSON/);
  });

  it('refuses an empty JSON body with 400 BadRequest', async () => {
    const res = await t()
      .http()
      .post('/__probe/echo')
      .set('Content-Type', 'application/json')
      .send('')
      .expect(400);
    expectErrorShape(res.body, 'BadRequest');
  });

  it.each([
    ['text/plain', 'name=a'],
    ['application/x-www-form-urlencoded', 'name=a&count=1'],
    ['application/xml', '<a/>'],
  ])('refuses a %s body with 400 BadRequest', async (contentType, payload) => {
    const res = await t()
      .http()
      .post('/__probe/echo')
      .set('Content-Type', contentType)
      .send(payload)
      .expect(400);
    expectErrorShape(res.body, 'BadRequest');
    expect(res.body.message).toMatch(/application\/json/);
  });

  it('refuses a body over 100 KiB with 413 and code BadRequest', async () => {
    const big = JSON.stringify({ name: 'a', count: 1, padding: 'x'.repeat(101 * 1024) });
    const res = await t()
      .http()
      .post('/__probe/echo')
      .set('Content-Type', 'application/json')
      .send(big)
      .expect(413);
    expectErrorShape(res.body, 'BadRequest');
  });

  it('accepts a valid body just under the limit when its fields are valid', async () => {
    const res = await t()
      .http()
      .post('/__probe/echo')
      .send({ name: 'abc', count: 2, tags: [{ label: 'x' }] })
      .expect(200);
    expect(res.body).toEqual({ name: 'abc', count: 2, tags: [{ label: 'x' }] });
  });

  it('lists every validation failure in details', async () => {
    const res = await t()
      .http()
      .post('/__probe/echo')
      .send({ name: '', count: 'three', tags: [{ label: 'far too long a label' }] })
      .expect(400);
    expectErrorShape(res.body, 'BadRequest');
    const fields = (res.body.details as { field: string; message: string }[]).map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'count', 'tags.0.label']));
    for (const detail of res.body.details) {
      expect(Object.keys(detail).sort()).toEqual(['field', 'message']);
    }
  });

  it('refuses missing fields', async () => {
    const res = await t().http().post('/__probe/echo').send({}).expect(400);
    const fields = (res.body.details as { field: string }[]).map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'count']));
  });

  it('refuses unknown fields instead of dropping them', async () => {
    const res = await t()
      .http()
      .post('/__probe/echo')
      .send({ name: 'a', count: 1, admin: true })
      .expect(400);
    expectErrorShape(res.body, 'BadRequest');
    expect(res.body.details).toEqual([
      { field: 'admin', message: 'property admin should not exist' },
    ]);
  });

  it.each([
    ['an array', '[1,2]'],
    ['a string', '"name"'],
    ['a number', '42'],
    ['null', 'null'],
  ])('refuses %s where an object is expected', async (_label, payload) => {
    const res = await t()
      .http()
      .post('/__probe/echo')
      .set('Content-Type', 'application/json')
      .send(payload)
      .expect(400);
    expectErrorShape(res.body, 'BadRequest');
  });

  it('renders AppException with its code and status', async () => {
    const res = await t().http().get('/__probe/app-error').expect(403);
    expect(res.body).toEqual({
      message: 'You need guildroles.update in this guild',
      code: 'Restricted',
    });
  });

  it("maps Nest's built-in exceptions onto the codes", async () => {
    expectErrorShape(
      (await t().http().get('/__probe/nest-forbidden').expect(403)).body,
      'Restricted',
    );
    expectErrorShape(
      (await t().http().get('/__probe/nest-unauthorized').expect(401)).body,
      'InvalidToken',
    );
  });

  it.each(['/__probe/crash', '/__probe/rejected-promise'])(
    'answers an unexpected error at %s with 500 InternalError, an error_id, and no internals',
    async (path) => {
      const res = await t().http().get(path).expect(500);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'error_id', 'message']);
      expect(res.body.code).toBe('InternalError');
      expect(res.body.error_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.text).not.toContain('secret_table');
      expect(res.text).not.toContain('SELECT');
      expect(res.text).not.toMatch(/at .*\.ts:\d+/);

      // The same id is in the log, with the stack, on the line of this request.
      const logged = t().logs.lines.find((line) => line.error_id === res.body.error_id);
      expect(logged).toBeDefined();
      expect(logged?.level).toBe('error');
      expect((logged?.err as { message: string }).message).toContain(INTERNAL_DETAIL);
      expect((logged?.err as { stack: string }).stack).toContain('probe.controller');
      expect(logged?.request_id).toBe(res.headers['x-request-id']);
    },
  );

  it("logs a failed query's error and SQL but never the values bound to it", async () => {
    const res = await t().http().get('/__probe/failing-query').expect(500);
    expectErrorShape(res.body, 'InternalError');
    expect(res.text).not.toContain(QUERY_SECRET);
    expect(res.text).not.toContain('missing_table_for_probe');
    const logged = t().logs.lines.find((line) => line.error_id === res.body.error_id);
    expect(logged).toMatchObject({
      level: 'error',
      err: {
        type: 'QueryFailedError',
        message: expect.stringContaining('missing_table_for_probe'),
        query: expect.stringContaining('$1'),
        parameters: '[redacted]',
      },
    });
    expect(t().logs.text()).not.toContain(QUERY_SECRET);
  });

  it('never logs the Authorization header or the token', async () => {
    const token = 'arl_ThisIsASecretTokenValue0123456789abcdef';
    await t().http().get('/__probe/crash').set('Authorization', `Bearer ${token}`).expect(500);
    await t().http().get('/config').set('Authorization', token).expect(200);
    expect(t().logs.text()).not.toContain(token);
    expect(t().logs.text().toLowerCase()).not.toContain('authorization');
  });

  it('lets browsers call every method from any origin and read the request id', async () => {
    const res = await t()
      .http()
      .options('/config')
      .set('Origin', 'https://dashboard.example')
      .set('Access-Control-Request-Method', 'DELETE')
      .set('Access-Control-Request-Headers', 'authorization,content-type')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toContain('DELETE');
    expect(res.headers['access-control-allow-headers']).toContain('authorization');
    const get = await t().http().get('/config').set('Origin', 'https://dashboard.example');
    expect(get.headers['access-control-expose-headers']).toContain('X-Request-Id');
    // Error answers too, or a browser could not read the error body or the request id.
    for (const refused of [
      await t().http().get('/sessions/@me').set('Origin', 'https://a.example').expect(401),
      await t().http().get('/nowhere').set('Origin', 'https://a.example').expect(404),
      // Refused by Fastify's router, before any request hook.
      await t().http().get('/config/%zz').set('Origin', 'https://a.example').expect(400),
      await t().http().get('/config').set('Origin', 'https://a.example'),
    ]) {
      expect(refused.headers['access-control-allow-origin']).toBe('*');
      expect(refused.headers['access-control-expose-headers']).toBe(
        'X-Request-Id, ETag, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Bucket',
      );
      expect(refused.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('answers the preflight of every path of the API (no route of its own takes OPTIONS)', async () => {
    const document = JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8')) as {
      paths: Record<string, object>;
    };
    const paths = Object.keys(document.paths).map((path) => path.replace(/\{[^}]+\}/g, '1'));
    expect(paths.length).toBeGreaterThan(20);
    for (const path of paths) {
      const res = await t()
        .http()
        .options(path)
        .set('Origin', 'https://dashboard.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization');
      expect({ path, status: res.status }).toEqual({ path, status: 204 });
      expect(res.headers['access-control-allow-methods']).toBe(
        'GET, HEAD, POST, PUT, PATCH, DELETE',
      );
    }
  });

  it('parses JSON bodies only (so no body reaches a DTO with gaps in an array)', () => {
    const fastify = t().app.getHttpAdapter().getInstance();
    expect(fastify.hasContentTypeParser('application/json')).toBe(true);
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'application/xml',
    ]) {
      expect({ type, parsed: fastify.hasContentTypeParser(type) }).toEqual({ type, parsed: false });
    }
  });

  it('refuses JSON that tries to pollute the prototype', async () => {
    const res = await t()
      .http()
      .post('/__probe/echo')
      .set('Content-Type', 'application/json')
      .send('{"name":"a","count":1,"__proto__":{"admin":true}}')
      .expect(400);
    expectErrorShape(res.body, 'BadRequest');
  });

  it('logs a line per failed request with its request id, and none per success at info', async () => {
    await t().http().get('/config').set('X-Request-Id', 'ok-request-1').expect(200);
    await t().http().get('/no/such').set('X-Request-Id', 'failed-request-1').expect(404);
    const lines = t().logs.lines.filter((line) => line.msg === 'request completed');
    expect(lines.find((line) => line.request_id === 'ok-request-1')).toBeUndefined();
    expect(lines.find((line) => line.request_id === 'failed-request-1')).toMatchObject({
      level: 'info',
      method: 'GET',
      path: '/no/such',
      status: 404,
      response_time_ms: expect.any(Number),
    });
  });

  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const kept = await t().http().get('/config').set('X-Request-Id', 'trace-42').expect(200);
    expect(kept.headers['x-request-id']).toBe('trace-42');
    const replaced = await t()
      .http()
      .get('/config')
      .set('X-Request-Id', `bad id with spaces ${'x'.repeat(80)}`)
      .expect(200);
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
