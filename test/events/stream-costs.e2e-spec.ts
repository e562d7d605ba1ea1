import type { Socket } from 'node:net';
import type { Response } from 'supertest';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { EventStreams, MAX_BUFFERED_BYTES } from 'src/events/event-streams';
import { MAX_REVISIONS_PER_CHANGE } from 'src/events/guild-events.service';
import { eventually } from 'test/support/eventually';
import { openRawStream, StreamClient, type ReceivedEvent } from 'test/support/event-stream';
import { useTestApp, type TestApp } from 'test/support/test-app';
import { actor, CHANNEL, GUILD, ok, type Actor } from 'test/support/demo-world';

// What an event stream may cost the instance (docs/request-costs.md): bursts, clients that do not
// read, stream slots and lifetime. On the embedded engine by default, PostgreSQL with DATABASE_URL.

const SETTINGS_EVENTS = ['ready', 'settings', 'reset'];

function guildStream(t: TestApp, token: string, lastEventId?: string): StreamClient {
  return new StreamClient(`http://127.0.0.1:${t.port}/guilds/${GUILD}/events`, SETTINGS_EVENTS, {
    token,
    lastEventId,
  });
}

let sinkNumber = 0;
/**
 * Replaces the guild's audit-log sinks with `n` new ones in one import: one change of as many
 * revisions as there were sinks, plus `n`.
 */
async function replaceSinks(t: TestApp, owner: Actor, n: number): Promise<Response> {
  const exported = await t
    .http()
    .get(`/guilds/${GUILD}/settings/export`)
    .set('Authorization', `Bearer ${owner.token}`)
    .expect(200);
  const sinks = Array.from({ length: n }, () => ({
    id: `00000000-0000-4000-8000-${String(++sinkNumber).padStart(12, '0')}`,
    channel: CHANNEL.modLog,
    events: ['lockdown'],
    enabled: true,
  }));
  const res = await t
    .http()
    .post(`/guilds/${GUILD}/settings/import`)
    .set('Authorization', `Bearer ${owner.token}`)
    .send({
      dry_run: false,
      document: { ...(exported.body as object), settings: { auditlog_sinks: sinks } },
    });
  expect(res.status).toBe(200);
  return res;
}

const lastRevision = (res: Response): number =>
  (res.body as { revisions: { revision: number }[] }).revisions.at(-1)?.revision ?? 0;

describe('guild event streams under bursts and slow readers', () => {
  const t = useTestApp();
  let owner: Actor;
  const open: StreamClient[] = [];
  afterEach(() => open.splice(0).forEach((client) => client.close()));

  beforeAll(async () => {
    owner = await actor(t(), DEMO_IDS.alice);
  });

  it(`sends a change of more than ${MAX_REVISIONS_PER_CHANGE} revisions as one reset event`, async () => {
    const stream = guildStream(t(), owner.token);
    open.push(stream);
    await stream.next(1);
    const big = await replaceSinks(t(), owner, MAX_REVISIONS_PER_CHANGE + 10);
    const small = ok(
      await owner.exec('auditlog_sinks', 'Create', {
        channel: CHANNEL.modLog,
        events: ['lockdown'],
        enabled: true,
      }),
    );
    const events = await stream.next(3);
    const types = events.map((event) => event.type);
    expect(types).toEqual(['ready', 'reset', 'settings']);
    expect(events[1]).toMatchObject({
      id: String(lastRevision(big)),
      data: { guild_id: GUILD, revision: lastRevision(big) },
    });
    expect(events[2].data).toMatchObject({
      setting: 'auditlog_sinks',
      operation: 'Create',
      key: { id: (small as { id: string }).id },
    });
  });

  it('resumes a stream over several pages of missed revisions, each event as a change sends it', async () => {
    const from = lastRevision(await replaceSinks(t(), owner, 20));
    await replaceSinks(t(), owner, 40);
    await replaceSinks(t(), owner, 40);
    const last = lastRevision(await replaceSinks(t(), owner, 40));
    expect(last - from).toBeGreaterThan(200);
    const stream = guildStream(t(), owner.token, String(from));
    open.push(stream);
    const events: ReceivedEvent[] = await stream.next(last - from);
    expect(events.map((event) => Number(event.id))).toEqual(
      Array.from({ length: last - from }, (_, i) => from + 1 + i),
    );
    expect(events[0]).toMatchObject({
      type: 'settings',
      data: {
        revision: from + 1,
        setting: 'auditlog_sinks',
        operation: 'Delete',
        changed: expect.arrayContaining(['id', 'channel', 'events', 'enabled']) as unknown,
      },
    });
  });

  it('ends the stream of a client that does not read once it holds the budget, and frees it', async () => {
    const server = t().app.getHttpServer();
    const sockets: Socket[] = [];
    const track = (socket: Socket): void => void sockets.push(socket);
    server.on('connection', track);
    const raw = await openRawStream(t().port, `/guilds/${GUILD}/events`, {
      Authorization: `Bearer ${owner.token}`,
    });
    server.off('connection', track);
    const streams = t().app.get(EventStreams);
    expect(streams.counts().guild).toBe(1);
    // The client stops reading: nothing more leaves the service's end of the connection.
    const socket = sockets.find((s) => s.remotePort === raw.response.socket.localPort);
    expect(socket).toBeDefined();
    socket?.cork();
    try {
      // About 330 bytes an event, 50 an import: past MAX_BUFFERED_BYTES within 30 imports.
      for (let i = 0; i < 30 && streams.counts().guild > 0; i++) {
        await replaceSinks(t(), owner, MAX_REVISIONS_PER_CHANGE / 2);
        expect(socket?.writableLength ?? 0).toBeLessThanOrEqual(MAX_BUFFERED_BYTES);
      }
      const left = await eventually(
        () => Promise.resolve(streams.counts().guild),
        (n) => n === 0,
      );
      expect(left).toBe(0);
      expect(t().logs.text()).toContain('An event stream was ended: its client does not read');
    } finally {
      socket?.uncork();
      raw.close();
    }
  });
});

describe('event stream slots and lifetime', () => {
  const t = useTestApp({
    env: {
      EVENTS_MAX_STREAMS: '3',
      EVENTS_MAX_ANONYMOUS_STREAMS: '2',
      EVENTS_MAX_STREAM_SECONDS: '5',
    },
  });
  const open: StreamClient[] = [];
  afterEach(() => open.splice(0).forEach((client) => client.close()));

  it('keeps slots for signed-in users: anonymous streams stop at their own cap', async () => {
    const owner = await actor(t(), DEMO_IDS.alice);
    for (let i = 0; i < 2; i++) {
      const bot = new StreamClient(`http://127.0.0.1:${t().port}/bot-stats/events`, ['stats']);
      open.push(bot);
      await bot.next(1);
    }
    const refused = await openRawStream(t().port, '/bot-stats/events');
    expect(refused.response.statusCode).toBe(429);
    expect(refused.response.headers['retry-after']).toBe('30');
    refused.close();
    const guild = guildStream(t(), owner.token);
    open.push(guild);
    const [ready] = await guild.next(1);
    expect(ready.type).toBe('ready');
  });

  it('ends a stream after EVENTS_MAX_STREAM_SECONDS; its client reconnects and resumes', async () => {
    const streams = t().app.get(EventStreams);
    await eventually(
      () => Promise.resolve(streams.counts().bot),
      (n) => n === 0,
    );
    const raw = await openRawStream(t().port, '/bot-stats/events');
    expect(raw.response.statusCode).toBe(200);
    await raw.ended;
    expect(raw.text()).toContain('retry: 3000');
    expect(streams.counts().bot).toBe(0);
  });
});
