/** Where a job is in its life; `GET /api/jobs/:id` and `?status=` use these words. */
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** What a job runs: a task, its validated input and, for a binary task, its body. */
export interface JobPayload {
  readonly task: string;
  readonly input: object;
  readonly body?: Uint8Array;
  /** Encrypt the result (AES-256-GCM) before it is stored. */
  readonly encrypt: boolean;
}

/** A finished job's error, as stored: the same code as the synchronous API's, and its detail. */
export interface JobError {
  readonly code: string;
  readonly detail: string;
}

/** What a successful run produced, and where it ran (pid, thread, host). */
export interface JobResult {
  readonly value: unknown;
  readonly waitMs: number;
  readonly runMs: number;
  readonly runner: JobRunner;
}

export interface JobRunner {
  readonly host: string;
  readonly pid: number;
  readonly threadId: number;
}

/** The job as clients see it. Times are ISO 8601. */
export interface JobView {
  readonly id: string;
  readonly task: string;
  readonly status: JobStatus;
  /** Runs started so far (a retry or a takeover after a crash counts). */
  readonly attempts: number;
  readonly createdAt: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly result?: JobResult;
  readonly error?: JobError;
  readonly links: { readonly self: string };
}

export interface JobListQuery {
  readonly status?: JobStatus;
  readonly limit: number;
  readonly offset: number;
}

export interface JobPage {
  readonly items: readonly JobView[];
  /** Offset of the next page, absent on the last. */
  readonly nextOffset?: number;
}

export const jobLink = (id: string) => `/api/jobs/${encodeURIComponent(id)}`;
export const iso = (epochMs: number | undefined) =>
  epochMs === undefined || epochMs === 0 ? undefined : new Date(epochMs).toISOString();
