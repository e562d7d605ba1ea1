import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { createApiToken, loginAs, type TestLogin } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';

const ROOT = DEMO_IDS.demoUser;
const SETTINGS = `/guilds/${DEMO_IDS.community}/settings`;

/**
 * A refusal says what was wrong first: a missing field is required, a value of the wrong type is
 * named as such, and a body that is not a JSON object is told so, before any range or format.
 */
describe('validation messages', () => {
  const t = useTestApp({ env: { ROOT_USERS: ROOT } });
  let login: TestLogin;
  let rootToken: string;

  beforeAll(async () => {
    login = await loginAs(t(), ROOT);
    rootToken = (await createApiToken(t(), login.token, { name: 'shard reporter' })).token;
  });

  it('names every missing field of a shard report as required', async () => {
    const res = await t().http().put('/internal/shards/0').set('Authorization', rootToken).send({});
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'BadRequest',
      message: expect.stringMatching(/^Invalid request: \w+ is required/),
    });
    const details = res.body.details as { field: string; message: string }[];
    expect(details).toContainEqual({ field: 'real_latency', message: 'real_latency is required' });
    for (const detail of details) expect(detail.message).toBe(`${detail.field} is required`);
  });

  it.each([
    [{ name: 'script', type: 'api' }, 'expiry is required'],
    [{ name: 'script', type: 'api', expiry: 'soon' }, 'expiry must be an integer number'],
    [{ name: 'script', type: 'api', expiry: 5 }, 'expiry must not be less than 60'],
  ])('POST /sessions with %j: %s', async (body, message) => {
    const res = await t()
      .http()
      .post('/sessions')
      .set('Authorization', `Bearer ${login.token}`)
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'BadRequest',
      message: `Invalid request: ${message}`,
      details: [{ field: 'expiry', message }],
    });
  });

  it.each([
    ['[]', 'an array'],
    ['null', 'null'],
    ['"View"', 'a string'],
    ['42', 'a number'],
  ])('refuses a body of %s: it must be a JSON object', async (json, what) => {
    const res = await t()
      .http()
      .post(SETTINGS)
      .set('Authorization', `Bearer ${login.token}`)
      .set('Content-Type', 'application/json')
      .send(json);
    const message = `The request body must be a JSON object, not ${what}`;
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'BadRequest',
      message,
      details: [{ field: 'body', message }],
    });
  });
});
