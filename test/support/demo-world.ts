import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { loginAs } from 'test/support/auth';
import type { TestApp } from 'test/support/test-app';

/**
 * The demo world every e2e suite plays in (src/platform/emulator/demo.seed.ts): the community's
 * ids, and a logged-in demo user who runs setting operations.
 */
/** Ids of the demo community (src/platform/emulator/demo.seed.ts). */
export const GUILD = DEMO_IDS.community;
const id = (n: number): string => `11000000000000001${String(n).padStart(2, '0')}`;
export const ROLE = {
  administrator: id(1),
  botRole: id(2),
  moderator: id(3),
  helper: id(4),
  eventHost: id(5),
  vip: id(7),
  member: id(9),
};
export const CHANNEL = { rules: id(21), general: id(24), modLog: id(32), staffChat: id(33) };
/** An `auditlog_sinks` entry the bot can serve: the moderation log channel. */
export const SINK_FIELDS = { channel: CHANNEL.modLog, events: ['lockdown'], enabled: true };

/** A logged-in demo user who runs setting operations. */
export interface Actor {
  token: string;
  exec(setting: string, operation: string, fields: unknown, guildId?: string): Promise<Response>;
}

export async function actor(t: TestApp, userId: string): Promise<Actor> {
  const { token } = await loginAs(t, userId);
  return {
    token,
    exec: (setting, operation, fields, guildId = GUILD) =>
      t
        .http()
        .post(`/guilds/${guildId}/settings`)
        .set('Authorization', `Bearer ${token}`)
        .send({ setting, operation, fields }),
  };
}

/** Asserts a 200 `{type: "Ok", data}` answer and returns `data`. */
export function ok(res: Response): unknown {
  expect({ status: res.status, body: res.body as unknown }).toMatchObject({
    status: 200,
    body: { type: 'Ok' },
  });
  return (res.body as { data: unknown }).data;
}
