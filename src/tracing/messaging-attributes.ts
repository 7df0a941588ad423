import type { Attributes } from '@opentelemetry/api';
import type { TracingConfig } from './otlp-export';

/**
 * The job spans in OpenTelemetry's messaging conventions: a job is a message
 * on the one queue `jobs` (BullMQ's queue, the SQLite store's table), sent by
 * `POST /api/jobs` and processed by whichever process claims it. The span
 * name is `{messaging.operation.name} {messaging.destination.name}`; the
 * task is `corepool.task.name`, as everywhere.
 */
export const JOBS_DESTINATION = 'jobs';

const OPERATION_TYPES = { submit: 'send', process: 'process' } as const;

export function messagingAttributes(
  system: TracingConfig['jobsSystem'],
  operation: keyof typeof OPERATION_TYPES,
): Attributes {
  return {
    'messaging.system': system,
    'messaging.operation.name': operation,
    'messaging.operation.type': OPERATION_TYPES[operation],
    'messaging.destination.name': JOBS_DESTINATION,
  };
}
