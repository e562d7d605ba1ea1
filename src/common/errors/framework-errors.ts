import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { renderError } from 'src/common/errors/error-mapping';
import { withCorsHeaders } from 'src/common/http/cors';
import { REQUEST_ID_HEADER } from 'src/common/http/request-id';

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
  // Answered before the request hooks run: a browser reads it only with the CORS headers.
  withCorsHeaders(reply);
  void reply.code(status).header(REQUEST_ID_HEADER, request.id).send(body);
}

/** Why Node's HTTP parser gave up on a connection, in words for the API's user. */
const CLIENT_ERROR_MESSAGES: Readonly<Record<string, string>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in full in time',
  HPE_HEADER_OVERFLOW: 'The request headers are too large',
};

/**
 * Errors Node's HTTP parser raises before any request exists (Fastify's `clientErrorHandler`):
 * malformed requests, oversized headers, bodies that stop arriving. Answered in the same
 * `{message, code}` shape, then the connection is closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const requestId = randomUUID();
    const message = CLIENT_ERROR_MESSAGES[error.code ?? ''] ?? 'The request is malformed';
    const { status, body } = renderError(
      new AppException(ErrorCode.BadRequest, message),
      requestId,
    );
    const json = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\n` +
        `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
        `Connection: close\r\n\r\n${json}`,
    );
  }
  socket.destroy();
}
