import { Module } from '@nestjs/common';
import { MetricsServer } from 'src/metrics/metrics.server';

/** The Prometheus endpoint (METRICS_PORT); the registry itself is `common/metrics`. */
@Module({ providers: [MetricsServer] })
export class MetricsModule {}
