import { randomUUID } from 'node:crypto';
import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { renderError } from 'src/common/errors/error-mapping';

/** Renders every error, from any layer, as `{message, code}` JSON (registered as `APP_FILTER`). */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger(AllExceptionsFilter.name);

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const errorId = randomUUID();
    const { status, body, unexpected, constraint, headers } = renderError(exception, errorId);
    if (unexpected) {
      this.logger.error(
        { err: exception, error_id: errorId, status },
        'Request failed unexpectedly',
      );
    } else if (constraint) {
      // A race past a pre-check or a validation gap: worth seeing, not an incident.
      this.logger.warn({ ...constraint, status }, 'Request refused by a database constraint');
    }
    const response: unknown = host.switchToHttp().getResponse();
    if (headers) {
      for (const [name, value] of Object.entries(headers)) {
        this.adapterHost.httpAdapter.setHeader(response, name, String(value));
      }
    }
    this.adapterHost.httpAdapter.reply(response, body, status);
  }
}
