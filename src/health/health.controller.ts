import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrorResponsesUnlimited } from 'src/common/decorators/api-error-responses.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { NoRateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import { LivenessDto, NotReadyDto, ReadinessDto } from 'src/health/dto/health.dto';
import { HealthService } from 'src/health/health.service';

@ApiTags('health')
@ApiErrorResponsesUnlimited()
@Public()
@NoRateLimit()
@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process is up and serving requests' })
  liveness(): LivenessDto {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({
    summary:
      'Readiness: 503 when the database does not answer; Redis, when configured, is reported',
  })
  @ApiOkResponse({ type: ReadinessDto, description: 'Ready: the database answers' })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    type: NotReadyDto,
    description: 'Not ready: the database does not answer',
  })
  async readiness(
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ReadinessDto | NotReadyDto> {
    const checks = await this.health.readiness();
    if (checks.database === 'up') {
      return { status: checks.redis === 'down' ? 'degraded' : 'ok', checks };
    }
    // Not the caller's error: a 503 report that load balancers act on, in the error shape.
    void reply.status(HttpStatus.SERVICE_UNAVAILABLE);
    return {
      status: 'error',
      message: 'Not ready: the database is unreachable',
      code: ErrorCode.InternalError,
      checks,
    };
  }
}
