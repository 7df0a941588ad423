import type { StoredTraceContext } from '../tracing/job-trace';

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
  /**
   * The submit span's trace context, stored with the job when its submission
   * was traced and sampled: every run continues it (`src/tracing/job-trace.ts`).
   * Not part of the idempotency fingerprint.
   */
  readonly trace?: StoredTraceContext;
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

/** How far a running job is, as its task last reported it. */
export interface JobProgress {
  /** 0..1 */
  readonly fraction: number;
  readonly message?: string;
  readonly at: string;
}

/** The job as clients see it. Times are ISO 8601. */
export interface JobView {
  readonly id: string;
  readonly task: string;
  /** Who submitted it (the caller's identity id); only they, or an admin, may see it. */
  readonly owner: string;
  readonly status: JobStatus;
  /** Runs started so far (a retry or a takeover after a crash counts). */
  readonly attempts: number;
  readonly createdAt: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** The task's latest report, while it runs and after. */
  readonly progress?: JobProgress;
  readonly result?: JobResult;
  readonly error?: JobError;
  /** The submitter's trace, when the submission was traced and sampled: every run of the job is in it. */
  readonly traceId?: string;
  readonly links: { readonly self: string };
}

export interface JobListQuery {
  readonly status?: JobStatus;
  readonly limit: number;
  /** Where the previous page ended (its `nextCursor`); absent for the first page. */
  readonly cursor?: string;
}

export interface JobPage {
  readonly items: readonly JobView[];
  /** Opaque position of the next page, absent on the last. */
  readonly nextCursor?: string;
}

/** One entry of a job's history, as `GET /api/jobs/:id/events` streams it. */
export interface JobEvent {
  /** Increasing within a job: the SSE event id, and where a resumed stream starts after. */
  readonly id: number;
  readonly type: 'status' | 'progress';
  readonly status?: JobStatus;
  readonly attempt?: number;
  readonly fraction?: number;
  readonly message?: string;
  readonly at: string;
}

export const isFinished = (status: JobStatus) => status !== 'queued' && status !== 'running';

export const jobLink = (id: string) => `/api/jobs/${encodeURIComponent(id)}`;
export const iso = (epochMs: number | undefined) =>
  epochMs === undefined || epochMs === 0 ? undefined : new Date(epochMs).toISOString();
