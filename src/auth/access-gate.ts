import type { FastifyRequest } from 'fastify';
import { Errors, type AppError } from '../common/app-error';
import { isRejection, type AuthenticationResult, type Authenticator } from './authenticator';
import { allows, type RouteAccess } from './scopes';

/** undefined: let the request through; an error: answer with it. */
export type AccessVerdict = AppError | undefined;

/**
 * Decides whether a request may reach its route, and records who sent it
 * (`request.identity`). Without an authenticator (`AUTH_MODE=none`) every
 * request passes as the anonymous client. Probes (`public`) pass unread, so a
 * broken key file or identity provider never fails a liveness probe.
 */
export function accessGate(authenticator: Authenticator | undefined) {
  return (request: FastifyRequest, access: RouteAccess): AccessVerdict | Promise<AccessVerdict> => {
    if (authenticator === undefined || access === 'public') return undefined;
    const result = authenticator.authenticate(request.headers);
    return result instanceof Promise
      ? result.then((settled) => verdict(request, access, settled))
      : verdict(request, access, result);
  };
}

function verdict(
  request: FastifyRequest,
  access: RouteAccess,
  result: AuthenticationResult,
): AccessVerdict {
  if (isRejection(result)) return Errors.unauthenticated(result.reason);
  request.identity = result;
  return allows(access, result.scopes) ? undefined : Errors.forbidden(access);
}
