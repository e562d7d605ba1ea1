import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from 'src/config/app-config';
import { ConfigController } from 'src/config/config.controller';

/** Makes the validated `AppConfig` injectable everywhere and serves `GET /config`. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      controllers: [ConfigController],
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
