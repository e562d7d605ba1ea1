import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_VERSION } from 'src/common/service-version';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { unusedPort } from 'test/support/ports';
import { buildIfStale, startService } from 'test/support/service-process';

/**
 * Tracing in the built service, as an operator turns it on (docs/operations.md, "Tracing"): spans
 * reach an OTLP/HTTP collector (here a stand-in that keeps what it receives, as http/json), with
 * the statements and Redis commands the instrumentations record. These patch modules as Node.js
 * loads them, which happens in the real process only (test/observability/tracing.e2e-spec.ts shows
 * the service's own spans in-process). Spans still buffered are sent as the service stops.
 */
jest.setTimeout(120_000);
beforeAll(buildIfStale, 180_000);

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}
interface ExportedSpan extends OtlpSpan {
  scope: string;
  resource: Record<string, string | undefined>;
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: OtlpSpan['attributes'] };
    scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[];
  }[];
}

const SERVER = 2;
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

/** A stand-in OTLP/HTTP collector: every span exported to `/v1/traces`, flattened. */
async function startCollector(): Promise<{
  url: string;
  spans: ExportedSpan[];
  paths: string[];
  close(): Promise<void>;
}> {
  const spans: ExportedSpan[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const sent = JSON.parse(body) as OtlpExport;
      for (const { resource, scopeSpans } of sent.resourceSpans) {
        const attributes = Object.fromEntries(
          (resource.attributes ?? []).map(({ key, value }) => [key, value.stringValue]),
        );
        for (const { scope, spans: scoped } of scopeSpans) {
          for (const span of scoped)
            spans.push({ ...span, scope: scope.name, resource: attributes });
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const attribute = (span: OtlpSpan, key: string): string | number | undefined => {
  const value = span.attributes?.find((entry) => entry.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

/** Starts the service with `env`, logs the demo user in, reads `/sessions/@me`, and stops it. */
async function runOnce(
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bms-tracing-'));
  try {
    const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ...env });
    const base = `http://127.0.0.1:${await service.port}`;
    const code = (await (
      await fetch(`${base}/demo/oauth2-code?user_id=${DEMO_IDS.demoUser}`)
    ).json()) as { code: string; redirect_uri: string };
    const login = await fetch(`${base}/oauth2`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: code.code, redirect_uri: code.redirect_uri }),
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    const me = await fetch(`${base}/sessions/@me`, {
      headers: {
        Authorization: `Bearer ${token}`,
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      },
    });
    expect(me.status).toBe(200);
    service.child.kill('SIGTERM');
    return { code: (await service.exited).code, output: service.output() };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('the built service with OTEL_TRACES_EXPORTER=otlp', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  beforeAll(async () => {
    collector = await startCollector();
  });
  afterAll(() => collector?.close());
  beforeEach(() => {
    collector.spans.length = 0;
    collector.paths.length = 0;
  });

  const tracingOn = (): Record<string, string> => ({
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_SERVICE_NAME: 'bms-under-test',
  });

  /** The request's span, continued from the caller's `traceparent`, and its children. */
  function requestTrace(): { request: ExportedSpan; children: ExportedSpan[] } {
    const request = collector.spans.find(
      (span) => span.kind === SERVER && span.name === 'GET /sessions/@me',
    );
    if (!request) throw new Error(`no span for GET /sessions/@me among ${collector.spans.length}`);
    return {
      request,
      children: collector.spans.filter((span) => span.parentSpanId === request.spanId),
    };
  }

  it('sends its spans over OTLP as it stops, with each SQL statement a child of its request', async () => {
    const { code } = await runOnce(tracingOn());
    expect(code).toBe(0);
    expect(new Set(collector.paths)).toEqual(new Set(['POST /v1/traces application/json']));
    const { request, children } = requestTrace();
    expect(request.traceId).toBe(CALLER_TRACE);
    expect(request.parentSpanId).toBe(CALLER_SPAN);
    expect(request.resource).toMatchObject({
      'service.name': 'bms-under-test',
      'service.version': SERVICE_VERSION,
    });
    expect(attribute(request, 'bms.caller.kind')).toBe('login');
    expect(attribute(request, 'http.response.status_code')).toBe(200);
    // The session lookup: its statements, from the PostgreSQL instrumentation (PGlite speaks
    // PostgreSQL's protocol to the same driver).
    const statements = children.filter(
      (span) => span.scope === '@opentelemetry/instrumentation-pg',
    );
    expect(statements.map((span) => span.name)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^pg\.query:SELECT/)]),
    );
    for (const statement of statements.filter((span) => span.name.startsWith('pg.query'))) {
      expect(attribute(statement, 'db.statement') ?? attribute(statement, 'db.query.text')).toEqual(
        expect.any(String),
      );
      // Never the values bound to it.
      expect(statement.attributes?.map((entry) => entry.key)).not.toContain('db.postgresql.values');
    }
  });

  (process.env.REDIS_URL ? it : it.skip)(
    'with REDIS_URL, each Redis command is a child of its request too',
    async () => {
      const { code } = await runOnce({ ...tracingOn(), REDIS_URL: process.env.REDIS_URL ?? '' });
      expect(code).toBe(0);
      const { children } = requestTrace();
      const commands = children.filter(
        (span) => span.scope === '@opentelemetry/instrumentation-ioredis',
      );
      expect(commands.length).toBeGreaterThan(0);
      // The command's name, never its keys or arguments.
      for (const command of commands) {
        const statement = attribute(command, 'db.statement') ?? attribute(command, 'db.query.text');
        expect(statement).toBe(command.name);
      }
    },
  );

  it('logs an export it could not make, and still stops cleanly', async () => {
    // Nothing listens there: the spans flushed at shutdown cannot be sent.
    const closed = await unusedPort();
    const { code, output } = await runOnce({
      ...tracingOn(),
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closed}`,
    });
    expect(code).toBe(0);
    const lines = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: string; context?: string });
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: expect.stringMatching(/^(warn|error)$/),
          context: 'OpenTelemetry',
        }),
      ]),
    );
  });

  it('sends nothing without OTEL_TRACES_EXPORTER, even with an endpoint set', async () => {
    const { code } = await runOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    expect(code).toBe(0);
    expect(collector.paths).toEqual([]);
  });
});

if (!process.env.REDIS_URL) {
  console.warn(
    'Skipping "with REDIS_URL, each Redis command …": REDIS_URL is not set (CI sets it)',
  );
}
