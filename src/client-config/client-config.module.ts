import { Module } from '@nestjs/common';
import { ConfigController } from 'src/client-config/client-config.controller';

/** `GET /config`: what a dashboard needs before anyone logs in (client id, community links). */
@Module({ controllers: [ConfigController] })
export class ClientConfigModule {}
