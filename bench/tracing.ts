import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sideBySide } from './side-by-side';

/**
 * `npm run bench:tracing`: what tracing costs on the hot path (bench/side-by-side.ts;
 * docs/operations.md, "Tracing"): the service as shipped (tracing off), and with
 * OTEL_TRACES_EXPORTER=otlp sending every request's spans (the default sampler) over OTLP/HTTP to a
 * stand-in collector that answers every export at once (BENCH_TRACES_SAMPLER_ARG: a share of them
 * instead). Writes bench/tracing-results.md. What
 * tracing compiled in but off costs against a build without it is `npm run bench` (or
 * `bench:instructions`) on both commits.
 */
/** `BENCH_TRACES_SAMPLER_ARG=0.1` samples that share of requests instead of every one. */
const RATIO = process.env.BENCH_TRACES_SAMPLER_ARG;

async function main(): Promise<void> {
  const collector = await startCollector();
  const sampled =
    RATIO === undefined ? 'every request sampled' : `${Number(RATIO) * 100}% of requests sampled`;
  try {
    await sideBySide({
      title: 'Tracing: cost on the hot path',
      file: 'tracing-results.md',
      describe: ({ rounds, durationS, connections }) =>
        `the built service twice (embedded default, live mode), tracing off (as shipped) and on (OTEL_TRACES_EXPORTER=otlp, ${sampled}, OTLP/HTTP protobuf to a local collector that answers at once), ${rounds} alternating rounds of ${durationS} s at ${connections} connections; medians. The collector received ${collector.received.exports} exports, ${(collector.received.bytes / 1_048_576).toFixed(1)} MiB in all.`,
      baseline: { label: 'tracing off', env: {} },
      variant: {
        label: 'tracing on',
        env: {
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          ...(RATIO === undefined
            ? {}
            : { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: RATIO }),
        },
      },
    });
  } finally {
    await collector.close();
  }
}

/** An OTLP/HTTP endpoint that answers every export at once, counting what it received. */
async function startCollector(): Promise<{
  url: string;
  received: { exports: number; bytes: number };
  close(): Promise<void>;
}> {
  const received = { exports: 0, bytes: 0 };
  const server: Server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
    req.on('end', () => {
      received.exports += 1;
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
