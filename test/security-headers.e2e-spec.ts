import { DOCS_CONTENT_SECURITY_POLICY } from 'src/common/http/security-headers';
import { loginAs } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';

describe('security headers', () => {
  const t = useTestApp();

  it.each([
    ['a public answer', 'GET', '/config', 200],
    ['a refusal without a session', 'GET', '/sessions/@me', 401],
    ['an unknown path', 'GET', '/no-such-route', 404],
    ['a malformed body', 'POST', '/oauth2', 400],
    ['the OpenAPI document', 'GET', '/openapi.json', 200],
    ['a Swagger UI file', 'GET', '/docs/swagger-ui-init.js', 200],
  ])('sends X-Content-Type-Options: nosniff on %s', async (_name, method, path, status) => {
    const res = await t()
      .http()
      [method === 'GET' ? 'get' : 'post'](path)
      .set('Content-Type', 'application/json')
      .send(method === 'POST' ? '{"code": 1}' : undefined);
    expect(res.status).toBe(status);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('keeps every answer that carries a token out of caches (Cache-Control: no-store)', async () => {
    const code = await t().http().get('/demo/oauth2-code').expect(200);
    const login = await t()
      .http()
      .post('/oauth2')
      .send({ code: code.body.code, redirect_uri: code.body.redirect_uri })
      .expect(200);
    expect(login.body.token).toMatch(/^arl_/);
    expect(login.headers['cache-control']).toBe('no-store');
    const { token } = await loginAs(t());
    const created = await t()
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${token}`)
      .send({ name: 'script', type: 'api', expiry: 3_600 })
      .expect(201);
    expect(created.body.token).toMatch(/^ara_/);
    expect(created.headers['cache-control']).toBe('no-store');
  });

  it('serves Swagger UI under a content security policy that no other site may frame', async () => {
    for (const path of [
      '/docs',
      '/docs/',
      '/docs/swagger-ui-init.js',
      '/docs/oauth2-redirect.html',
    ]) {
      const res = await t().http().get(path);
      expect({ path, status: res.status < 400 }).toEqual({ path, status: true });
      expect(res.headers['content-security-policy']).toBe(DOCS_CONTENT_SECURITY_POLICY);
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    expect(DOCS_CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(DOCS_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    // The API's own answers are JSON, not pages: no page policy on them.
    const api = await t().http().get('/config').expect(200);
    expect(api.headers['content-security-policy']).toBeUndefined();
  });
});
