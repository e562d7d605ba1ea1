import { Module } from '@nestjs/common';
import { HealthController } from 'src/health/health.controller';
import { HealthService } from 'src/health/health.service';
import { Feature } from 'src/common/feature/feature.decorator';

@Feature({ tags: { health: 'Liveness and readiness probes' } })
@Module({ controllers: [HealthController], providers: [HealthService] })
export class HealthModule {}
