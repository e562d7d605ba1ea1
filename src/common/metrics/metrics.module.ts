import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Metrics } from 'src/common/metrics/metrics';

/** The one `Metrics` registry, for every module that records (off unless `enabled`). */
@Global()
@Module({})
export class MetricsRegistryModule {
  static forRoot(enabled: boolean): DynamicModule {
    return {
      module: MetricsRegistryModule,
      providers: [{ provide: Metrics, useValue: new Metrics(enabled) }],
      exports: [Metrics],
    };
  }
}
