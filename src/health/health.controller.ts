import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { LivenessDto, NotReadyDto, ReadinessDto } from 'src/health/dto/health.dto';
import { HealthService } from 'src/health/health.service';

@ApiTags('health')
@ApiErrorResponses()
@Public()
@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process is up and serving requests' })
  liveness(): LivenessDto {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: the database (and Redis, when configured) answer' })
  @ApiResponse({ status: HttpStatus.SERVICE_UNAVAILABLE, type: NotReadyDto })
  async readiness(
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ReadinessDto | NotReadyDto> {
    const checks = await this.health.readiness();
    const down = Object.entries(checks)
      .filter(([, status]) => status === 'down')
      .map(([name]) => name);
    if (down.length === 0) return { status: 'ok', checks };
    // Not an error of the caller: a 503 report that load balancers act on, in the error shape.
    void reply.status(HttpStatus.SERVICE_UNAVAILABLE);
    return {
      status: 'error',
      message: `Not ready: ${down.join(' and ')} ${down.length > 1 ? 'are' : 'is'} down`,
      code: ErrorCode.InternalError,
      checks,
    };
  }
}
