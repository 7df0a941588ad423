/**
 * Every error code corepool answers with. Clients, dashboards and alert rules
 * depend on these strings: add new ones, never rename one.
 */
export const ErrorCode = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  ROUTE_NOT_FOUND: 'ROUTE_NOT_FOUND',
  TASK_NOT_FOUND: 'TASK_NOT_FOUND',
  JOB_NOT_FOUND: 'JOB_NOT_FOUND',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  POOL_SATURATED: 'POOL_SATURATED',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  TASK_TIMEOUT: 'TASK_TIMEOUT',
  TASK_CANCELLED: 'TASK_CANCELLED',
  TASK_FAILED: 'TASK_FAILED',
  WORKER_CRASHED: 'WORKER_CRASHED',
  WORKER_OUT_OF_MEMORY: 'WORKER_OUT_OF_MEMORY',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
