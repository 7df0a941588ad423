import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type Type,
} from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { UnrecoverableError, type Job } from 'bullmq';
import { Errors } from '../common/app-error';
import { ThrottledWarning } from '../common/throttled-warning';
import { ErrorCode } from '../common/error-codes';
import { AppConfig } from '../config/app-config';
import { activeTracing, type JobRunTrace } from '../tracing/tracing';
import { appendEvent } from './bull-job-events';
import { JOBS_QUEUE, storedBytesKey, type BullJobData } from './bull-jobs.constants';
import { CancelSignals } from './cancel-signals.service';
import { isRetryable, JobExecutor, toJobError } from './job-executor.service';
import { recordJobEnd } from './job-metrics';
import type { JobError, JobEvent, JobResult } from './job.types';
import { redisOptions } from './redis-options';
import type { TaskProgress } from '@corepool/core';

/**
 * The consumer side of the BullMQ backend: every replica runs one BullMQ
 * worker whose concurrency is the threads jobs may hold (`JOBS_MAX_THREADS`),
 * so a replica takes only as many jobs as it may run at once and the rest
 * stay in Redis for any replica to take. BullMQ holds a lock per running job, renewed by this
 * process's event loop (never blocked: the work is on threads); when the
 * process dies the lock expires and another replica's stalled-job check puts
 * the job back in the queue.
 */
@Injectable()
export class BullJobProcessor
  extends WorkerHost
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger('BullJobProcessor');
  private readonly workerWarning = new ThrottledWarning(this.logger);

  constructor(
    private readonly executor: JobExecutor,
    private readonly cancels: CancelSignals,
    private readonly config: AppConfig,
  ) {
    super();
  }

  /**
   * With Redis away, closing the worker would wait for it forever (its
   * connection queues the QUIT until Redis returns): close it by force then.
   * Running jobs still end with the pool's drain; their replica is gone, so
   * their lock expires and another replica takes them.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.cancels.connected) await this.worker.close(true);
  }

  /** Takes jobs only once the whole application, the pool's warm threads included, is up. */
  onApplicationBootstrap(): void {
    this.worker
      .run()
      .catch((error: Error) => this.logger.error(`Worker stopped: ${error.message}`));
  }

  async process(job: Job<BullJobData, JobResult>): Promise<JobResult> {
    const id = job.id as string;
    const { task, input, encrypt } = job.data;
    // Runs started, as the job's view counts them: a stalled job's takeover is a run too, which
    // `attemptsMade` (failures) does not count and `attemptsStarted` does.
    const attempt = Math.max(job.attemptsStarted, job.attemptsMade + 1);
    if (attempt > this.config.jobs.attempts) return this.abandoned(job, attempt - 1);
    const controller = new AbortController();
    const unwatch = this.cancels.watch(id, controller);
    this.log(job, { type: 'status', status: 'running', attempt, at: now() });
    // The submitter's context, in BullMQ's own field for it: kept through retries and stalls (ADR 0048).
    const stored = job.opts.telemetry?.metadata;
    const trace: JobRunTrace | undefined =
      stored === undefined
        ? undefined
        : activeTracing()?.startJobRun(stored, {
            jobId: id,
            task,
            attempt,
          });
    try {
      if (await this.cancels.isRequested(id)) throw Errors.taskCancelled();
      const body = await this.body(job.data);
      const payload = { task, input, encrypt, ...(body === undefined ? {} : { body }) };
      const result = await this.executor.execute(
        payload,
        controller.signal,
        progressWriter(job, this.log),
        trace?.span,
      );
      trace?.ended('succeeded', undefined);
      recordJobEnd(task, 'succeeded', job.timestamp);
      await this.ended(job, { type: 'status', status: 'succeeded', attempt, at: now() });
      return result;
    } catch (error) {
      throw await this.recordFailure(job, error, attempt, trace);
    } finally {
      unwatch();
    }
  }

  /**
   * A job whose last run's process died, taken over with no attempt left:
   * failed as a crash (as on SQLite) by this replica, which so gives back its
   * body and bytes. BullMQ's own end for it (`maxStalledCount`) would not: it
   * fails the job inside Redis, where no replica sees it end.
   */
  private async abandoned(job: Job<BullJobData, JobResult>, lastRun: number): Promise<never> {
    const error: JobError = {
      code: ErrorCode.WORKER_CRASHED,
      detail: 'The process running the job stopped (its lock expired) and no attempts are left',
    };
    recordJobEnd(job.data.task, 'failed', job.timestamp);
    await this.ended(job, { type: 'status', status: 'failed', attempt: lastRun, at: now() });
    throw new UnrecoverableError(JSON.stringify(error));
  }

  /**
   * The job's binary body: its own Redis value, read as a Buffer (ADR 0053), or
   * base64 in the data of a job an earlier release submitted.
   */
  private async body(data: BullJobData): Promise<Buffer | undefined> {
    if (data.bodyKey !== undefined) {
      const body = await this.cancels.redis.getBuffer(data.bodyKey);
      // Deleted only when the job ends; gone otherwise means Redis lost it (a flush, an eviction).
      if (body === null) throw Errors.taskFailed("The job's body is no longer in Redis");
      return body;
    }
    return data.body === undefined ? undefined : Buffer.from(data.body, 'base64');
  }

  /**
   * Records a run that threw: back to the queue (its event logged) when the
   * error is retryable and attempts are left, else its last event. Returns
   * what BullMQ is thrown: the coded error as the failure reason, which
   * GET /api/jobs/:id reads back, unrecoverable when it is not retryable.
   */
  private async recordFailure(
    job: Job<BullJobData, JobResult>,
    error: unknown,
    attempt: number,
    trace: JobRunTrace | undefined,
  ): Promise<Error> {
    let jobError = toJobError(error);
    const cancelled = jobError.code === ErrorCode.TASK_CANCELLED;
    if (cancelled) jobError = { code: jobError.code, detail: 'The job was cancelled' };
    const retry = isRetryable(jobError) && job.attemptsMade + 1 < (job.opts.attempts ?? 1);
    trace?.ended(retry ? 'retry' : cancelled ? 'cancelled' : 'failed', jobError);
    if (retry) {
      this.log(job, {
        type: 'status',
        status: 'queued',
        attempt,
        message: jobError.code,
        at: now(),
      });
    } else {
      recordJobEnd(job.data.task, cancelled ? 'cancelled' : 'failed', job.timestamp);
      const status = cancelled ? 'cancelled' : 'failed';
      await this.ended(job, { type: 'status', status, attempt, at: now() });
    }
    const reason = JSON.stringify(jobError);
    return isRetryable(jobError) ? new Error(reason) : new UnrecoverableError(reason);
  }

  /** The job's last event, its body dropped and its bytes given back to the bound. */
  private async ended(
    job: Job<BullJobData, JobResult>,
    event: Omit<JobEvent, 'id'>,
  ): Promise<void> {
    try {
      // Before BullMQ records the end: a stream that sees the job finished has seen this event.
      await appendEvent(job, event);
      if (job.data.bodyKey !== undefined) await this.cancels.redis.del(job.data.bodyKey);
      if (job.data.body !== undefined) {
        const withoutBody: { -readonly [K in keyof BullJobData]?: BullJobData[K] } = {
          ...job.data,
        };
        delete withoutBody.body;
        await job.updateData(withoutBody as BullJobData);
      }
      await this.cancels.redis.decrby(
        storedBytesKey(this.config.jobs.queuePrefix),
        job.data.bytes ?? 0,
      );
    } catch (error) {
      this.workerWarning.warn(`Job ${job.id as string}: ${(error as Error).message}`);
    }
  }

  /** Events are best effort: a lost one never fails the job (the status is BullMQ's). */
  private readonly log = (job: Job<BullJobData, JobResult>, event: Omit<JobEvent, 'id'>): void => {
    appendEvent(job, event).catch((error: Error) =>
      this.workerWarning.warn(`Job ${job.id as string}: ${error.message}`),
    );
  };

  @OnWorkerEvent('error')
  onError(error: Error): void {
    this.workerWarning.warn(`BullMQ worker: ${error.message}`);
  }
}

/**
 * The processor with this configuration's worker options. `@Processor()`
 * options are static, while concurrency and locks come from the
 * configuration: so the decorated class is made here, once per module.
 */
export function configuredProcessor(config: AppConfig): Type<BullJobProcessor> {
  const { lockDurationMs, attempts, redisUrl } = config.jobs;
  @Processor(JOBS_QUEUE, {
    // Started in onApplicationBootstrap, after the threads are warm.
    autorun: false,
    concurrency: config.scheduler.jobsMaxThreads,
    // The worker's own connection reconnects forever and queues while Redis is away.
    connection: redisOptions(redisUrl as string),
    lockDuration: lockDurationMs,
    stalledInterval: Math.max(500, Math.floor(lockDurationMs / 2)),
    // A job whose replica died comes back to a worker, which fails it once its runs are spent
    // (`abandoned`): BullMQ's own limit is only a backstop, one past what a worker reaches.
    maxStalledCount: attempts,
  })
  class ConfiguredBullJobProcessor extends BullJobProcessor {}
  return ConfiguredBullJobProcessor;
}

/** Progress is written to Redis at most this often per job (the job's hash and its log). */
const PROGRESS_WRITE_MS = 500;

const now = () => new Date().toISOString();

/** Writes a job's progress (`updateProgress`) and logs it as an event, at most every PROGRESS_WRITE_MS. */
function progressWriter(
  job: Job<BullJobData, JobResult>,
  log: (job: Job<BullJobData, JobResult>, event: Omit<JobEvent, 'id'>) => void,
): (progress: TaskProgress) => void {
  let writtenAt = -Infinity;
  return ({ fraction, message }) => {
    if (Date.now() - writtenAt < PROGRESS_WRITE_MS && fraction < 1) return;
    writtenAt = Date.now();
    const progress = { fraction, ...(message === undefined ? {} : { message }), at: now() };
    job.updateProgress(progress).catch(() => undefined);
    log(job, { type: 'progress', ...progress });
  };
}
