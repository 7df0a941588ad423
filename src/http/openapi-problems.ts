import type { HeaderObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { ErrorCode } from '../common/error-codes';
import { ERROR_TABLE, type HttpErrorMapping } from './error-table';

/** The request id every answer carries (`x-request-id`), as an OpenAPI header component. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * The response headers of the document, by name: the ones the error table
 * gives a code, the ones the core's facts add (`Retry-After`,
 * `Accept-Encoding`), the quota's, and those of successful answers.
 */
export const RESPONSE_HEADERS: Readonly<Record<string, HeaderObject>> = {
  [REQUEST_ID_HEADER]: {
    description:
      'The request id (a safe incoming one is honoured); every log line about the request carries it.',
    schema: { type: 'string' },
  },
  'retry-after': {
    description: 'When a retry is likely to be accepted, in whole seconds.',
    schema: { type: 'integer', minimum: 0 },
  },
  'www-authenticate': {
    description: 'The challenge: API keys and tokens may both come as `Authorization: Bearer`.',
    schema: { type: 'string' },
  },
  'accept-encoding': {
    description: 'The content codings a body may use, when its own was refused.',
    schema: { type: 'string' },
  },
  'ratelimit-limit': {
    description: "The client's quota (requests per second).",
    schema: { type: 'integer' },
  },
  'ratelimit-remaining': {
    description: 'What is left of it in this window.',
    schema: { type: 'integer' },
  },
  'ratelimit-reset': {
    description: 'Seconds until the window resets.',
    schema: { type: 'integer' },
  },
  location: { description: 'The job, to poll.', schema: { type: 'string' } },
  'x-task-wait-ms': {
    description: "A task's answer in bytes: from the request's arrival until a thread started it.",
    schema: { type: 'string' },
  },
  'x-task-run-ms': {
    description: "A task's answer in bytes: its time on the thread.",
    schema: { type: 'string' },
  },
};

/** A header of `RESPONSE_HEADERS`, by reference. */
export const headerRef = (name: string): ReferenceObject => ({
  $ref: `#/components/headers/${name}`,
});

/**
 * Codes whose refusal comes with `Retry-After`: the `Errors` factories that
 * estimate when to retry (`retryAfterSeconds`), which `headersOf` turns into the header.
 */
const RETRY_AFTER = new Set<ErrorCode>([
  ErrorCode.POOL_SATURATED,
  ErrorCode.JOB_QUEUE_FULL,
  ErrorCode.QUEUE_UNAVAILABLE,
  ErrorCode.RATE_LIMITED,
]);

/** The response headers a code's answer may carry, besides the request id. */
function headersOfCode(code: ErrorCode): string[] {
  const mapping: HttpErrorMapping = ERROR_TABLE[code];
  // `connection: close` is hop-by-hop: not part of what a client is told.
  const own = Object.keys(mapping.headers ?? {}).filter((name) => name !== 'connection');
  return [
    ...own,
    ...(RETRY_AFTER.has(code) ? ['retry-after'] : []),
    ...(code === ErrorCode.UNSUPPORTED_MEDIA_TYPE ? ['accept-encoding'] : []),
    ...(code === ErrorCode.RATE_LIMITED
      ? ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']
      : []),
  ];
}

/** RFC 9457 problem details as `toProblem` writes them (`ProblemDetails`). */
export const PROBLEM_SCHEMA: SchemaObject = {
  type: 'object',
  description:
    'An error, as `application/problem+json`: `code` is stable (added, never renamed); `type` is the code as a URN.',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: {
      type: 'string',
      description: 'The code as a URN, e.g. `urn:corepool:problem:validation-failed`.',
    },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'What happened this time, for a person.' },
    code: { type: 'string', enum: Object.values(ErrorCode) },
    instance: { type: 'string', description: 'The request path.' },
    errors: {
      type: 'array',
      description: 'VALIDATION_FAILED: the first fields that failed, one message each.',
      items: {
        type: 'object',
        required: ['property', 'messages'],
        properties: {
          property: { type: 'string' },
          messages: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    errorCount: {
      type: 'integer',
      description: 'VALIDATION_FAILED: how many fields failed in all.',
    },
    reason: {
      type: 'string',
      description:
        'POOL_SATURATED: `deadline`, `too-long`, `queue-delay`, `backstop` or `memory` (docs/overload.md).',
    },
    limit: {
      type: 'number',
      description:
        "The bound that was passed, in its code's unit: bytes, milliseconds, megabytes, jobs, the quota.",
    },
    traceId: { type: 'string', description: "The request's trace, when it was traced." },
  },
};

/** The codes of one answer grouped by status, in the error table's order. */
export function problemsByStatus(codes: ReadonlySet<ErrorCode>): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERROR_TABLE) as ErrorCode[]) {
    if (!codes.has(code)) continue;
    const { status } = ERROR_TABLE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

/** A component name for one status's codes: `ValidationFailedOrInvalidDeadline`. */
export function problemResponseName(codes: readonly ErrorCode[]): string {
  const pascal = (code: string) =>
    code
      .toLowerCase()
      .split('_')
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join('');
  return codes.map(pascal).join('Or');
}

/**
 * The answer of one status with these codes: problem+json whose `code` is
 * one of them, with the headers they carry; status and titles from the error table.
 */
export function problemResponse(status: number, codes: readonly ErrorCode[]): ResponseObject {
  const headers = [REQUEST_ID_HEADER, ...new Set(codes.flatMap(headersOfCode))];
  return {
    description: codes.map((code) => `\`${code}\`: ${ERROR_TABLE[code].title}`).join('; '),
    headers: Object.fromEntries(headers.map((name) => [name, headerRef(name)])),
    content: {
      'application/problem+json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/Problem' },
            {
              type: 'object',
              required: ['code', 'status'],
              properties: {
                code: { type: 'string', enum: [...codes] },
                status: { type: 'integer', enum: [status] },
              },
            },
          ],
        },
      },
    },
  };
}
