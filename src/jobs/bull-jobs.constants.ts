/** The BullMQ queue every replica shares (under `JOBS_QUEUE_PREFIX`). */
export const JOBS_QUEUE = 'jobs';

/** What a BullMQ job carries in Redis: JSON, so a binary body travels as base64. */
export interface BullJobData {
  readonly task: string;
  readonly input: object;
  /** Dropped (`updateData`) when the job ends, so a finished job holds no body. */
  readonly body?: string;
  readonly encrypt: boolean;
  /** The caller's identity id: only they (or an admin) see the job. */
  readonly owner: string;
  /** Bytes the job counts against `JOBS_MAX_STORED_BYTES` while it waits (input and body). */
  readonly bytes: number;
  /** Set with an `Idempotency-Key`: the body's fingerprint, and this submission's own nonce. */
  readonly fingerprint?: string;
  readonly nonce?: string;
}

/** Pub/sub channel on which `DELETE /api/jobs/:id` tells every replica to abort a running job. */
export const cancelChannel = (prefix: string) => `${prefix}:${JOBS_QUEUE}:cancel`;
/** Set with a TTL too, so a replica that picks the job up after the message still sees it. */
export const cancelKey = (prefix: string, id: string) => `${prefix}:${JOBS_QUEUE}:cancel:${id}`;
/** A queued job that was cancelled is removed from the queue; this record answers GET. */
export const tombstoneKey = (prefix: string, id: string) =>
  `${prefix}:${JOBS_QUEUE}:cancelled:${id}`;
/** Every job by creation (`<createdAt>:<id>`, lexical order), for cursor pages. */
export const indexKey = (prefix: string) => `${prefix}:${JOBS_QUEUE}:index`;
/** The same, per owner. */
export const ownerIndexKey = (prefix: string, owner: string) =>
  `${prefix}:${JOBS_QUEUE}:index:${Buffer.from(owner).toString('base64url')}`;
/** Bytes of the inputs and bodies of jobs not finished yet, against `JOBS_MAX_STORED_BYTES`. */
export const storedBytesKey = (prefix: string) => `${prefix}:${JOBS_QUEUE}:stored-bytes`;
