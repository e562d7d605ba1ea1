import { setTimeout as sleep } from 'node:timers/promises';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';
import { startTracing, type Tracing } from 'src/common/tracing/tracing';
import { tracingConfig } from 'src/config/tracing-config';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { PlatformService } from 'src/platform/platform.service';
import { PlatformProbeController } from 'test/fixtures/platform-probe.controller';
import { emulatorOf, loginAs } from 'test/support/auth';
import { faultsOf } from 'test/support/emulator-faults';
import { eventually } from 'test/support/eventually';
import { liveModeEnv, useEmulator } from 'test/support/platform';
import { startRestProxy, type RestProxy } from 'test/support/rest-proxy';
import { createTestApp, useTestApp, type TestApp } from 'test/support/test-app';

/**
 * Traces as an operator reads them (docs/operations.md, "Tracing"): the service's spans go to an
 * in-memory exporter instead of OTLP. The database and Redis spans come from instrumentations that
 * patch modules as Node.js loads them, which Jest's own module loader bypasses; the process test
 * (test/observability/tracing-export.e2e-spec.ts) shows those, exported over OTLP.
 */
const exporter = new InMemorySpanExporter();
let tracing: Tracing | null = null;
beforeAll(() => {
  tracing = startTracing(tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' }), 'test', {
    processor: new SimpleSpanProcessor({ exporter }),
  });
});
afterAll(() => tracing?.shutdown());

const TRACING_ON = { OTEL_TRACES_EXPORTER: 'otlp' };

const spanId = (span: ReadableSpan): string => span.spanContext().spanId;
const traceId = (span: ReadableSpan): string => span.spanContext().traceId;
const parentId = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const nanos = ([seconds, ns]: [number, number]): bigint =>
  BigInt(seconds) * 1_000_000_000n + BigInt(ns);

/** The finished spans of one trace, once its server span for `name` has ended. */
async function traceOf(
  name: string,
  where: (span: ReadableSpan) => boolean = () => true,
): Promise<{
  request: ReadableSpan;
  spans: ReadableSpan[];
}> {
  // A request's span ends once its answer is sent, which may be just after the client has it.
  const request = await eventually(
    () =>
      Promise.resolve(
        exporter
          .getFinishedSpans()
          .find((span) => span.kind === SpanKind.SERVER && span.name === name && where(span)),
      ),
    (found) => found !== undefined,
    10_000,
  );
  if (!request) throw new Error(`no finished request span named ${name}`);
  return {
    request,
    spans: exporter.getFinishedSpans().filter((span) => traceId(span) === traceId(request)),
  };
}

describe('a cold guild open, traced', () => {
  // Answers expire at once and the guild state is not fed: the open asks the platform for all.
  const t = useTestApp({
    controllers: [PlatformProbeController],
    env: { ...TRACING_ON, PLATFORM_CACHE_TTL: '1', GUILD_STATE_FEED: 'false' },
  });
  afterEach(() => emulatorOf(t()).intercept(null));
  beforeEach(() => exporter.reset());

  it('is one request span with its platform calls as children, made together', async () => {
    const login = await loginAs(t(), DEMO_IDS.carol);
    // Past the cache's 1 s, so that the open below asks the platform again.
    await sleep(1_100);
    const calls = emulatorOf(t()).requests.length;
    // The platform itself is never sent the service's trace context (only a REST proxy is). Its
    // answers are held until all five calls are under way (10 s at most), as a platform 100 ms
    // away would: on a local emulator a call could otherwise end before the next one starts.
    const traceparents: (string | undefined)[] = [];
    let release = (): void => undefined;
    const allUnderWay = new Promise<void>((resolve) => (release = resolve));
    emulatorOf(t()).intercept(async (_route, reply, closing) => {
      traceparents.push(reply.request.headers.traceparent as string | undefined);
      if (traceparents.length === 5) release();
      await Promise.race([allUnderWay, sleep(10_000, undefined, { signal: closing, ref: false })]);
    });
    await t()
      .http()
      .get(`/users/@me/guilds/${DEMO_IDS.botLab}`)
      .set('Authorization', `Bearer ${login.token}`)
      .expect(200);
    const made = emulatorOf(t()).requests.slice(calls);
    emulatorOf(t()).intercept(null);
    expect(traceparents).toEqual(made.map(() => undefined));

    const { request, spans } = await traceOf('GET /users/@me/guilds/:guild_id');
    expect(parentId(request)).toBeUndefined();
    expect(request.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/users/@me/guilds/:guild_id',
      'url.path': `/users/@me/guilds/${DEMO_IDS.botLab}`,
      'http.response.status_code': 200,
      'bms.caller.kind': 'login',
      'bms.guild.id': DEMO_IDS.botLab,
      'bms.request.id': expect.any(String),
    });
    expect(request.status.code).toBe(SpanStatusCode.UNSET);

    const platformCalls = spans.filter((span) => parentId(span) === spanId(request));
    expect(platformCalls.map((span) => span.name).sort()).toEqual(
      made.map((call) => `platform ${call.route}`).sort(),
    );
    expect(platformCalls).toHaveLength(5);
    for (const call of platformCalls) {
      expect(call.kind).toBe(SpanKind.CLIENT);
      expect(call.attributes).toMatchObject({
        'bms.platform.route': call.name.slice('platform '.length),
        'bms.platform.identity': expect.stringMatching(/^(bot|bearer)$/),
        'bms.platform.outcome': 'ok',
        'bms.platform.attempts': 1,
      });
      // Each attempt on the wire is the call's child, with what the platform answered.
      const attempts = spans.filter((span) => parentId(span) === spanId(call));
      expect(attempts).toHaveLength(1);
      expect(attempts[0].attributes).toMatchObject({
        'http.request.method': 'GET',
        'http.response.status_code': 200,
        'bms.platform.attempt': 1,
        // The route's template, never the ids: a member's id would tie a user to a guild.
        'url.full': expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api\/v10\/(guilds|users)\//),
      });
      expect(attempts[0].attributes['url.full']).toMatch(
        new RegExp(`/api/v10${call.name.split(' ')[2]?.replace(/:(\w+)/g, '\\{$1\\}')}$`),
      );
    }
    // No span names a member: no id after /members/ in any attribute.
    for (const span of spans) {
      expect(
        Object.values(span.attributes).filter((value) => /\/members\/\d/.test(String(value))),
      ).toEqual([]);
    }
    // The bot-token calls waited for their turn in the shared bucket queues, and say how long.
    const botCalls = platformCalls.filter((s) => s.attributes['bms.platform.identity'] === 'bot');
    expect(botCalls.length).toBeGreaterThan(0);
    for (const call of botCalls) {
      expect(call.attributes['bms.platform.queue_wait_ms']).toEqual(expect.any(Number));
    }
    // Made together: every call started before any of them ended.
    const lastStart = platformCalls
      .map((s) => nanos(s.startTime))
      .reduce((a, b) => (a > b ? a : b));
    const firstEnd = platformCalls.map((s) => nanos(s.endTime)).reduce((a, b) => (a < b ? a : b));
    expect(lastStart).toBeLessThan(firstEnd);
    // And all within the request's own span.
    for (const call of platformCalls) {
      expect(nanos(call.startTime)).toBeGreaterThanOrEqual(nanos(request.startTime));
      expect(nanos(call.endTime)).toBeLessThanOrEqual(nanos(request.endTime));
    }
  });

  it('shows each attempt of a retried call, and a request the platform failed as an error', async () => {
    // A guild nobody looked up: the platform fails the first attempt, then answers 404.
    faultsOf(emulatorOf(t())).inject('GET /guilds/:guild_id', { kind: 'error', status: 502 }, 1);
    await t().http().get('/__probe/platform/guilds/1100000000000000777').expect(404);
    let { request, spans } = await traceOf('GET /__probe/platform/guilds/:guild_id');
    let call = spans.find((span) => parentId(span) === spanId(request))!;
    expect(call.attributes).toMatchObject({
      'bms.platform.outcome': 'client_error',
      'bms.platform.attempts': 2,
    });
    const attempts = spans.filter((span) => parentId(span) === spanId(call));
    expect(attempts.map((span) => span.attributes['bms.platform.attempt'])).toEqual([1, 2]);
    expect(attempts.map((span) => span.attributes['http.response.status_code'])).toEqual([
      502, 404,
    ]);
    expect(attempts.map((span) => span.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
    ]);

    // Every attempt failing: the service answers 5xx, and its request span is an error.
    exporter.reset();
    faultsOf(emulatorOf(t())).inject('GET /guilds/:guild_id', { kind: 'error', status: 502 }, 10);
    const failed = await t().http().get('/__probe/platform/guilds/1100000000000000778');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    ({ request, spans } = await traceOf('GET /__probe/platform/guilds/:guild_id'));
    expect(request.status.code).toBe(SpanStatusCode.ERROR);
    expect(request.attributes['http.response.status_code']).toBe(failed.status);
    call = spans.find((span) => parentId(span) === spanId(request))!;
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    expect(call.attributes['bms.platform.outcome']).toBe('server_error');
    expect(call.attributes['bms.platform.attempts']).toBeGreaterThan(1);
    expect(spans.filter((span) => parentId(span) === spanId(call))).toHaveLength(
      call.attributes['bms.platform.attempts'] as number,
    );
  });

  it("continues the caller's trace from an incoming traceparent", async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const login = await loginAs(t(), DEMO_IDS.carol);
    await t()
      .http()
      .get('/sessions/@me')
      .set('Authorization', `Bearer ${login.token}`)
      .set('traceparent', `00-${callerTrace}-${callerSpan}-01`)
      .expect(200);
    const { request } = await traceOf('GET /sessions/@me', (span) => traceId(span) === callerTrace);
    expect(parentId(request)).toBe(callerSpan);
    expect(request.parentSpanContext?.isRemote).toBe(true);
  });

  it('starts a trace of its own for a malformed traceparent', async () => {
    await t().http().get('/config').set('traceparent', '00-not-a-trace-01').expect(200);
    const { request } = await traceOf('GET /config');
    expect(parentId(request)).toBeUndefined();
    expect(request.attributes['bms.caller.kind']).toBe('anonymous');
  });

  it('does not mark a request refused with 4xx as an error', async () => {
    await t().http().get('/sessions/@me').set('Authorization', 'Bearer nope').expect(401);
    const { request } = await traceOf('GET /sessions/@me');
    expect(request.attributes['http.response.status_code']).toBe(401);
    expect(request.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('names a request no route matched by that, never by its path', async () => {
    await t().http().get('/no/such/path/123456').expect(404);
    const { request } = await traceOf('GET unmatched');
    expect(request.attributes['http.route']).toBe('unmatched');
    expect(request.attributes['url.path']).toBe('/no/such/path/123456');
  });
});

/**
 * Through the REST proxy, the bot's calls carry the attempt's `traceparent`, so the proxy's own
 * spans (if it traces) join the request's trace; the platform is never sent one.
 */
describe('platform calls through the REST proxy, traced', () => {
  const platform = useEmulator();
  let proxy: RestProxy;
  let t: TestApp;

  beforeAll(async () => {
    proxy = await startRestProxy(platform());
    t = await createTestApp({
      controllers: [PlatformProbeController],
      env: { ...liveModeEnv(platform()), ...TRACING_ON, DISCORD_REST_PROXY_URL: proxy.url },
    });
    await t.app.get(PlatformService).getBotUser();
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });
  beforeEach(() => exporter.reset());

  it("send the attempt's trace context to the proxy", async () => {
    const sent = proxy.requests.length;
    await t.http().get(`/__probe/platform/guilds/${DEMO_IDS.botLab}`).expect(200);
    const { request, spans } = await traceOf('GET /__probe/platform/guilds/:guild_id');
    const call = spans.find((span) => parentId(span) === spanId(request));
    const attempt = spans.find((span) => call && parentId(span) === spanId(call));
    expect(call?.name).toBe('platform GET /guilds/:guild_id');
    expect(attempt).toBeDefined();
    const proxied = proxy.requests.slice(sent);
    expect(proxied).toHaveLength(1);
    expect(proxied[0].traceparent).toBe(`00-${traceId(request)}-${spanId(attempt!)}-01`);
  });
});
