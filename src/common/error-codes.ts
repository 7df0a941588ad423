import { ErrorCode as CoreErrorCode } from '@corepool/core';

/**
 * Every error code corepool answers with: the engine's (`@corepool/core`)
 * and the service's own. Clients, dashboards and alert rules depend on these
 * strings: add new ones, never rename one.
 */
export const ErrorCode = {
  ...CoreErrorCode,
  INVALID_DEADLINE: 'INVALID_DEADLINE',
  ROUTE_NOT_FOUND: 'ROUTE_NOT_FOUND',
  JOB_NOT_FOUND: 'JOB_NOT_FOUND',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HEADERS_TOO_LARGE: 'HEADERS_TOO_LARGE',
  METRICS_UNAVAILABLE: 'METRICS_UNAVAILABLE',
  JOB_QUEUE_FULL: 'JOB_QUEUE_FULL',
  QUEUE_UNAVAILABLE: 'QUEUE_UNAVAILABLE',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  RATE_LIMITED: 'RATE_LIMITED',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  OFFSET_NOT_SUPPORTED: 'OFFSET_NOT_SUPPORTED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
