import { Module } from '@nestjs/common';
import { ConfigController } from 'src/client-config/client-config.controller';
import { Feature } from 'src/common/feature/feature.decorator';

/** `GET /config`: what a dashboard needs before anyone logs in (client id, community links). */
@Feature({ tags: { config: 'Public configuration for clients' } })
@Module({ controllers: [ConfigController] })
export class ClientConfigModule {}
