import { checkAnswer } from 'test/support/contract';

/** The checker every e2e answer goes through: it must catch what it is there to catch. */
describe('the OpenAPI contract check', () => {
  const json = { 'content-type': 'application/json; charset=utf-8' };
  const session = {
    id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    user_id: '1100000000000000010',
    type: 'login',
    name: null,
    state: 'normal',
    created_at: '2026-11-24T00:00:00.000Z',
    expiry: '2026-12-24T00:00:00.000Z',
  };
  const answer = (overrides: Partial<Parameters<typeof checkAnswer>[0]>): string[] =>
    checkAnswer({
      method: 'GET',
      routeUrl: '/sessions/@me',
      status: 200,
      headers: json,
      body: JSON.stringify(session),
      ...overrides,
    });

  it('accepts a documented answer', () => {
    expect(answer({})).toEqual([]);
  });

  it('refuses a body that does not match the schema', () => {
    expect(answer({ body: JSON.stringify({ ...session, user_id: 10 }) })).toEqual([
      expect.stringContaining('body/user_id must be string'),
    ]);
  });

  it('refuses an undocumented status', () => {
    expect(answer({ status: 418 })).toEqual([
      'GET /sessions/{id} → 418: the status is not documented'.replace('{id}', '@me'),
    ]);
  });

  it('refuses an undocumented content type', () => {
    expect(answer({ headers: { 'content-type': 'text/plain' } })).toEqual([
      expect.stringContaining('content type "text/plain" is not documented'),
    ]);
  });

  it('refuses an operation the document does not have', () => {
    expect(answer({ method: 'PATCH' })).toEqual([
      'PATCH /sessions/@me → 200: the operation is not in the document',
    ]);
  });

  it('refuses a body where none is documented', () => {
    expect(
      answer({ method: 'DELETE', routeUrl: '/sessions/:session_id', status: 204, body: '{}' }),
    ).toEqual([expect.stringContaining('a body (application/json) where none is documented')]);
  });

  it('checks documented headers', () => {
    const etagOnly = { ...json, etag: 5 };
    expect(answer({ routeUrl: '/bot-state', status: 304, headers: etagOnly, body: null })).toEqual([
      expect.stringContaining('header ETag must be string'),
    ]);
  });

  it('checks a HEAD answer as the GET without its body', () => {
    expect(answer({ method: 'HEAD', body: null })).toEqual([]);
  });

  describe('request bodies the server accepted', () => {
    const settings = (requestBody: unknown): string[] =>
      answer({
        method: 'POST',
        routeUrl: '/guilds/:guild_id/settings',
        body: JSON.stringify({ type: 'Ok', data: [] }),
        requestBody,
      });

    it('accepts a body typed for its setting and operation', () => {
      expect(settings({ setting: 'guildroles', operation: 'View', fields: { limit: 25 } })).toEqual(
        [],
      );
    });

    it('refuses fields the named setting does not have', () => {
      expect(
        settings({ setting: 'guildroles', operation: 'View', fields: { colour: 'red' } }),
      ).toEqual([
        expect.stringContaining('the server accepted a request body the document refuses'),
      ]);
    });

    it('refuses an operation the setting does not offer', () => {
      expect(settings({ setting: 'settings_history', operation: 'Delete', fields: {} })).toEqual([
        expect.stringContaining('the server accepted a request body the document refuses'),
      ]);
    });

    it('ignores a body the server refused', () => {
      expect(
        answer({
          method: 'POST',
          routeUrl: '/guilds/:guild_id/settings',
          status: 400,
          body: JSON.stringify({ message: 'setting must be a string', code: 'BadRequest' }),
          requestBody: { setting: 5 },
        }),
      ).toEqual([]);
    });

    it('refuses an accepted body on an operation that documents none', () => {
      expect(answer({ requestBody: { x: 1 } })).toEqual([
        'GET /sessions/{id} → 200: a request body was accepted where none is documented'.replace(
          '{id}',
          '@me',
        ),
      ]);
    });
  });
});
