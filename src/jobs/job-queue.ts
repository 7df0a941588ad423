import type { JobEvent, JobListQuery, JobPage, JobPayload, JobStatus, JobView } from './job.types';

/** Who asks: their identity id, and whether they may see every owner's jobs (`admin` scope). */
export interface JobCaller {
  readonly id: string;
  readonly admin: boolean;
}

/** A retry of a submission is known by its key (per owner) and the fingerprint of its body. */
export interface IdempotencyClaim {
  readonly key: string;
  readonly fingerprint: string;
}

export interface JobSubmission {
  readonly payload: JobPayload;
  readonly owner: string;
  readonly idempotency?: IdempotencyClaim;
}

/** The job, and whether this submission created it (false: a retry got the original). */
export interface Submitted {
  readonly job: JobView;
  readonly created: boolean;
}

/** A job's events after a given id, and the job as it stands after them. */
export interface JobEvents {
  readonly job: JobView;
  readonly events: readonly JobEvent[];
}

/** The job store as readiness sees it: whether it can serve, and the facts an operator needs. */
export interface JobStoreHealth {
  readonly up: boolean;
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * The one contract of both job backends (SQLite, the default; BullMQ on
 * Redis), pinned by `test/job-queue.contract-spec.ts`. Errors are AppErrors
 * with codes (JOB_QUEUE_FULL, QUEUE_UNAVAILABLE, IDEMPOTENCY_KEY_REUSED,
 * PAYLOAD_TOO_LARGE); a job stores codes, never an HTTP status. Reads are
 * scoped to the caller: another owner's job is `undefined`, exactly like a job
 * that does not exist, unless the caller is an admin.
 */
export abstract class JobQueue {
  /**
   * Accepts a validated job; it runs later, on whichever process claims it.
   * With an idempotency claim, a second submission with the same key and
   * fingerprint returns the first job (`created: false`); the same key with
   * another fingerprint is IDEMPOTENCY_KEY_REUSED. Keys live as long as their job.
   */
  abstract submit(submission: JobSubmission): Promise<Submitted>;
  abstract get(id: string, caller: JobCaller): Promise<JobView | undefined>;
  /** Newest first; the cost of a page does not grow with how deep it is. */
  abstract list(query: JobListQuery, caller: JobCaller): Promise<JobPage>;
  /** A queued job is cancelled at once, a running one aborted (on whichever process runs it). */
  abstract cancel(id: string, caller: JobCaller): Promise<JobView | undefined>;
  /** The job's events with an id above `afterId`, oldest first. */
  abstract events(id: string, caller: JobCaller, afterId: number): Promise<JobEvents | undefined>;
  /** Jobs per status right now, over every owner (the queue-depth gauge). */
  abstract counts(): Promise<Partial<Record<JobStatus, number>>>;

  /** Whether the store this process writes can serve (readiness); a backend with nothing to check is up. */
  health(): JobStoreHealth {
    return { up: true, details: {} };
  }
}

/** True when `caller` may see `owner`'s job. */
export const mayAccess = (caller: JobCaller, owner: string) => caller.admin || caller.id === owner;
