import type { JobListQuery, JobPage, JobPayload, JobStatus, JobView } from './job.types';

/**
 * Where jobs live and who runs them. Two implementations, chosen at start
 * from `REDIS_URL`: the in-process store, and BullMQ on Redis.
 */
export abstract class JobStore {
  /** Accepts a validated job; it runs later. Rejects with QUEUE_UNAVAILABLE / JOB_QUEUE_FULL. */
  abstract submit(payload: JobPayload): Promise<JobView>;
  abstract get(id: string): Promise<JobView | undefined>;
  /** A queued job is removed, a running one aborted; resolves with the job as it now stands. */
  abstract cancel(id: string): Promise<JobView | undefined>;
  abstract list(query: JobListQuery): Promise<JobPage>;
  /** Jobs per status right now (for the queue-depth gauge). */
  abstract counts(): Promise<Partial<Record<JobStatus, number>>>;
}
