import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { Metrics } from 'src/common/metrics/metrics';
import { RedisConnection } from 'src/common/redis/redis.module';
import { AppConfig } from 'src/config/app-config';

/**
 * `GET /metrics` in Prometheus' text format on a listener of its own (METRICS_PORT, on
 * METRICS_HOST, loopback by default): off the public API, so no client of the API reaches it and
 * no API limit applies to scrapes. With METRICS_TOKEN, a scrape must send
 * `Authorization: Bearer <token>`. Registers the gauges read at scrape time: the database pool and
 * Redis.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server: Server | null = null;

  constructor(
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
    private readonly redis: RedisConnection,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { port, host } = this.config.metrics;
    if (!this.metrics.enabled || port === null) return;
    this.registerGauges();
    const server = createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    this.logger.log({ host, port: this.port }, 'Metrics served at /metrics');
  }

  /** The port scrapes reach (METRICS_PORT=0 asks for any free one); null when not serving. */
  get port(): number | null {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address.port : null;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private registerGauges(): void {
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    this.metrics.labelledGauge(
      'bms_db_pool_connections',
      'Database connections of the pool: total, idle, and requests waiting for one',
      'state',
      () => ({
        total: pool?.totalCount ?? 0,
        idle: pool?.idleCount ?? 0,
        waiting: pool?.waitingCount ?? 0,
      }),
    );
    this.metrics.gauge(
      'bms_redis_up',
      'Whether Redis is configured and its connection ready (1), or not (0)',
      () => (this.redis.client?.status === 'ready' ? 1 : 0),
    );
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found\n');
      return;
    }
    if (!this.authorized(request.headers.authorization)) {
      response
        .writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer' })
        .end('Unauthorized\n');
      return;
    }
    try {
      const body = await this.metrics.registry.metrics();
      response.writeHead(200, { 'Content-Type': this.metrics.registry.contentType }).end(body);
    } catch (error) {
      this.logger.error({ reason: (error as Error).message }, 'Metrics could not be collected');
      response.writeHead(500, { 'Content-Type': 'text/plain' }).end('Metrics unavailable\n');
    }
  }

  private authorized(header: string | undefined): boolean {
    const token = this.config.metrics.token;
    if (token === null) return true;
    const expected = Buffer.from(`Bearer ${token}`);
    const given = Buffer.from(header ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
