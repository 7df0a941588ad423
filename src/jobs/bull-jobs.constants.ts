/** The BullMQ queue every replica shares (under `JOBS_QUEUE_PREFIX`). */
export const JOBS_QUEUE = 'jobs';

/**
 * What a BullMQ job carries in Redis, as JSON. A binary body is not in it:
 * it is a Redis value of its own (`bodyKey`), written from the Buffer and read
 * back as one, so that no process encodes, copies into JSON or parses it on its
 * event loop (docs/adr/0053-a-bullmq-jobs-body-is-a-redis-value-of-its-own.md).
 */
export interface BullJobData {
  readonly task: string;
  readonly input: object;
  /** The key of the job's binary body; deleted when the job ends, so a finished job holds no body. */
  readonly bodyKey?: string;
  /** A body as an earlier release stored it: base64 in the data (dropped when the job ends). */
  readonly body?: string;
  readonly encrypt: boolean;
  /** The caller's identity id: only they (or an admin) see the job. */
  readonly owner: string;
  /** Bytes the job counts against `JOBS_MAX_STORED_BYTES` while it waits (input, body, trace context). */
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
/** Bytes of the inputs, bodies and trace contexts of jobs not finished yet, against `JOBS_MAX_STORED_BYTES`. */
export const storedBytesKey = (prefix: string) => `${prefix}:${JOBS_QUEUE}:stored-bytes`;
/** A submission's binary body, a Redis string of its own bytes; one per submission (not per job id). */
export const bodyKey = (prefix: string, submission: string) =>
  `${prefix}:${JOBS_QUEUE}:body:${submission}`;
