import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { PlatformConnection } from 'src/platform/platform-connection';
import type { PlatformEmulator } from 'src/platform/emulator/platform-emulator';
import { DEMO_REDIRECT } from 'test/support/platform';
import type { TestApp } from 'test/support/test-app';

export interface TestLogin {
  token: string;
  sessionId: string;
  userId: string;
}

/** Logs a demo user in through the real flow: a code from the demo route, then POST /oauth2. */
export async function loginAs(t: TestApp, userId: string = DEMO_IDS.demoUser): Promise<TestLogin> {
  const code = await t.http().get(`/demo/oauth2-code?user_id=${userId}`).expect(200);
  const login = await t
    .http()
    .post('/oauth2')
    .send({ code: code.body.code, redirect_uri: code.body.redirect_uri })
    .expect(200);
  return { token: login.body.token, sessionId: login.body.session_id, userId };
}

/**
 * Logs a user in with a code straight from the emulator (its own in live mode, or the demo one:
 * `emulatorOf(t)`), granting `scopes` (the emulator's default without), then POST /oauth2.
 * Returns the login session's token.
 */
export async function loginOn(
  t: TestApp,
  emulator: PlatformEmulator,
  userId: string = DEMO_IDS.demoUser,
  scopes?: string[],
): Promise<string> {
  const code = emulator.issueCode({ userId, scopes, redirectUri: DEMO_REDIRECT });
  const res = await t
    .http()
    .post('/oauth2')
    .send({ code, redirect_uri: DEMO_REDIRECT })
    .expect(200);
  return res.body.token as string;
}

/** Creates an API token with a login session's token. */
export async function createApiToken(
  t: TestApp,
  loginToken: string,
  body: {
    name?: string;
    expiry?: number;
    scope?: { guilds?: string[]; permissions?: string[] };
  } = {},
): Promise<TestLogin> {
  const res = await t
    .http()
    .post('/sessions')
    .set('Authorization', `Bearer ${loginToken}`)
    .send({
      name: body.name ?? 'script',
      type: 'api',
      expiry: body.expiry ?? 3600,
      ...(body.scope && { scope: body.scope }),
    })
    .expect(201);
  return { token: res.body.token, sessionId: res.body.session_id, userId: res.body.user_id };
}

export function databaseOf(t: TestApp): DataSource {
  return t.app.get<DataSource>(getDataSourceToken());
}

export function emulatorOf(t: TestApp): PlatformEmulator {
  const emulator = t.app.get(PlatformConnection).emulator;
  if (!emulator) throw new Error('the application is not in demo mode');
  return emulator;
}

/**
 * A dashboard user who is also the root user the bot's processes report as (live mode): Alice's
 * login session, and an API token of hers for the internal feed routes.
 */
export async function signInAsRoot(
  t: TestApp,
  emulator: PlatformEmulator,
  userId: string = DEMO_IDS.alice,
): Promise<{ login: string; bot: string }> {
  const login = await loginOn(t, emulator, userId);
  const api = await createApiToken(t, login, { name: 'bot' });
  return { login, bot: api.token };
}
