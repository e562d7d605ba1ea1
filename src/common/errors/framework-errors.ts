import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { renderError } from 'src/common/errors/error-mapping';
import { REQUEST_ID_HEADER } from 'src/common/logging/request-id';

const MESSAGES: Readonly<Record<string, string>> = {
  FST_ERR_BAD_URL: 'The URL is malformed (invalid percent-encoding)',
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is too long',
};

/**
 * Errors Fastify raises while routing, before Nest sees the request (Fastify's `frameworkErrors`
 * option): answered in the same `{message, code}` shape as every other error.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const message = MESSAGES[error.code] ?? 'The request could not be routed';
  const { status, body } = renderError(new AppException(ErrorCode.BadRequest, message), request.id);
  void reply.code(status).header(REQUEST_ID_HEADER, request.id).send(body);
}
