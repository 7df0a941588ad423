import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Errors, type AppError } from '../common/app-error';
import { PROBLEM_CONTENT_TYPE, sendProblem, toProblem } from './problem-details.filter';

/**
 * Fastify's `frameworkErrors`: a URL that cannot be decoded or a path
 * parameter past `maxParamLength` is refused by the router before Nest sees
 * the request; without this hook Fastify answers with its own JSON shape.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const problem = Errors.validationFailed(error.message, [
    { property: 'url', messages: [error.message] },
  ]);
  void sendProblem(reply.header('x-request-id', request.id), problem);
}

/**
 * Fastify's `clientErrorHandler`, for errors Node's HTTP parser raises before
 * there is a request at all: malformed HTTP, headers over the size limit, and
 * the headers or request timeouts (slowloris). The answer is problem+json
 * like every other error, then the connection is closed.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way on this socket cannot be followed by another one.
  const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inProgress?.headersSent !== true) {
    const problem = toProblem(toClientProblem(error));
    const body = JSON.stringify(problem);
    socket.write(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

function toClientProblem(error: NodeJS.ErrnoException): AppError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return Errors.requestTimeout();
    case 'HPE_HEADER_OVERFLOW':
      return Errors.headersTooLarge();
    default: {
      const detail = `Malformed HTTP request (${error.code ?? 'parse error'})`;
      return Errors.validationFailed(detail, [{ property: 'request', messages: [detail] }]);
    }
  }
}
