import { hostname } from 'node:os';
import { Injectable } from '@nestjs/common';
import { JOBS_CLIENT_KEY } from '../auth/client-key';
import { AppError, Errors } from '../common/app-error';
import { ErrorCode } from '../common/error-codes';
import { AppConfig } from '../config/app-config';
import type { RequestSpan } from '../tracing/tracing';
import { WorkerPoolService } from '@corepool/nestjs';
import type { TaskProgress } from '@corepool/core';
import type { JobError, JobPayload, JobResult } from './job.types';
import { encryptResult } from './result-cipher';

/**
 * Failures that say nothing about the job itself: another run (on this
 * process later, or on another replica) may well succeed. Everything else —
 * the task threw, its input was unusable, it timed out or exhausted its heap —
 * would fail the same way again, so it is final at once.
 */
const RETRYABLE: ReadonlySet<string> = new Set([
  ErrorCode.WORKER_CRASHED,
  ErrorCode.POOL_SATURATED,
  ErrorCode.SHUTTING_DOWN,
  ErrorCode.QUEUE_UNAVAILABLE,
]);

export const isRetryable = (error: JobError) => RETRYABLE.has(error.code);

/** The coded error as a job stores it (a plain object: it goes to Redis as JSON). */
export function toJobError(error: unknown): JobError {
  const coded = error instanceof AppError ? error : Errors.internal();
  return { code: coded.code, detail: coded.detail };
}

/** Runs one job's task on this process's pool, as the synchronous API would. */
@Injectable()
export class JobExecutor {
  private readonly host = hostname();

  constructor(
    private readonly pool: WorkerPoolService,
    private readonly config: AppConfig,
  ) {}

  /**
   * Resolves with the result, or rejects with an AppError (the same codes as
   * `POST /api/tasks`; a result over `JOBS_MAX_RESULT_BYTES` is TASK_FAILED).
   */
  async execute(
    payload: JobPayload,
    signal: AbortSignal,
    onProgress?: (progress: TaskProgress) => void,
    trace?: RequestSpan,
  ): Promise<JobResult> {
    // Jobs share the pool as one more client, capped at JOBS_MAX_THREADS threads.
    const result = await this.pool.run(payload.task, payload.input, {
      body: payload.body,
      signal,
      client: JOBS_CLIENT_KEY,
      onProgress,
      // The run's span (a traced job): the task's schedule and run spans are its children.
      trace,
    });
    const key = this.config.jobs.resultEncryptionKey;
    // Submission refuses `encrypt` without a key; a replica configured without one fails loudly.
    if (payload.encrypt && key === undefined) {
      throw Errors.taskFailed('RESULT_ENCRYPTION_KEY is not set on the replica that ran this job');
    }
    // A task that outputs bytes (compress) has them stored as base64.
    const plain =
      result.value instanceof Uint8Array
        ? Buffer.from(result.value).toString('base64')
        : result.value;
    const value = payload.encrypt && key !== undefined ? encryptResult(plain, key) : plain;
    const { maxResultBytes } = this.config.jobs;
    // Measured as stored: JSON text (a big result is refused once, not stored and re-read).
    const size = Buffer.byteLength(JSON.stringify(value) ?? '');
    if (size > maxResultBytes) {
      throw Errors.taskFailed(
        `The result is ${size} bytes, over JOBS_MAX_RESULT_BYTES (${maxResultBytes}); it was not stored`,
      );
    }
    return {
      value,
      waitMs: result.waitMs,
      runMs: result.runMs,
      runner: { host: this.host, pid: process.pid, threadId: result.threadId },
    };
  }
}
