/** The BullMQ queue every replica shares (under `JOBS_QUEUE_PREFIX`). */
export const JOBS_QUEUE = 'jobs';

/** What a BullMQ job carries in Redis: JSON, so a binary body travels as base64. */
export interface BullJobData {
  readonly task: string;
  readonly input: object;
  readonly body?: string;
  readonly encrypt: boolean;
}

/** Pub/sub channel on which `DELETE /api/jobs/:id` tells every replica to abort a running job. */
export const cancelChannel = (prefix: string) => `${prefix}:${JOBS_QUEUE}:cancel`;
/** Set with a TTL too, so a replica that picks the job up after the message still sees it. */
export const cancelKey = (prefix: string, id: string) => `${prefix}:${JOBS_QUEUE}:cancel:${id}`;
/** A queued job that was cancelled is removed from the queue; this record answers GET. */
export const tombstoneKey = (prefix: string, id: string) =>
  `${prefix}:${JOBS_QUEUE}:cancelled:${id}`;
