import type { JobError, JobPayload, JobResult } from '../../job.types';

export interface SqliteStoreOptions {
  readonly path: string;
  readonly maxStored: number;
  readonly maxStoredBytes: number;
  readonly resultTtlSeconds: number;
  readonly attempts: number;
  readonly backoffMs: number;
  /**
   * How long a statement waits for another process's write lock, holding the
   * event loop. 0 for the group commit's connection (`group-commit.ts`),
   * which retries later instead.
   */
  readonly busyTimeoutMs?: number;
  /**
   * Whether a missing file is created (default true): only when the whole
   * service starts. A process the cluster primary forked opens the file the
   * primary made, and never creates one (docs/jobs.md).
   */
  readonly create?: boolean;
  /** The store this connection must be (the writer thread's: the one its process's reads opened). */
  readonly storeId?: string;
}

/** A job one process claimed: what it needs to run it. */
export interface ClaimedJob {
  readonly id: string;
  readonly task: string;
  readonly createdAt: number;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly payload: JobPayload;
}

/** How a run ended, as the runner hands it back. */
export type RunEnding =
  | { readonly status: 'succeeded'; readonly result: JobResult }
  | { readonly status: 'failed' | 'cancelled'; readonly error: JobError }
  | { readonly status: 'retry'; readonly error: JobError };

/** What a recorded end (or cancel) tells the metrics about the job. */
export interface EndedJob {
  readonly task: string;
  readonly createdAt: number;
}
