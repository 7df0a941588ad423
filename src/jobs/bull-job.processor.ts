import { Injectable, Logger, type OnApplicationBootstrap, type Type } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { UnrecoverableError, type Job } from 'bullmq';
import { Errors } from '../common/app-error';
import { ThrottledWarning } from '../common/throttled-warning';
import { ErrorCode } from '../common/error-codes';
import { AppConfig } from '../config/app-config';
import { JOBS_QUEUE, type BullJobData } from './bull-jobs.constants';
import { CancelSignals } from './cancel-signals.service';
import { isRetryable, JobExecutor, toJobError } from './job-executor.service';
import { recordJobEnd } from './job-metrics';
import type { JobResult } from './job.types';
import { redisOptions } from './redis-options';

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
export class BullJobProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger('BullJobProcessor');
  private readonly workerWarning = new ThrottledWarning(this.logger);

  constructor(
    private readonly executor: JobExecutor,
    private readonly cancels: CancelSignals,
  ) {
    super();
  }

  /** Takes jobs only once the whole application, the pool's warm threads included, is up. */
  onApplicationBootstrap(): void {
    this.worker
      .run()
      .catch((error: Error) => this.logger.error(`Worker stopped: ${error.message}`));
  }

  async process(job: Job<BullJobData, JobResult>): Promise<JobResult> {
    const id = job.id as string;
    const { task, input, body, encrypt } = job.data;
    const controller = new AbortController();
    const unwatch = this.cancels.watch(id, controller);
    try {
      if (await this.cancels.isRequested(id)) throw Errors.taskCancelled();
      const payload = {
        task,
        input,
        encrypt,
        ...(body === undefined ? {} : { body: Buffer.from(body, 'base64') }),
      };
      const result = await this.executor.execute(payload, controller.signal);
      recordJobEnd(task, 'succeeded', job.timestamp);
      return result;
    } catch (error) {
      const jobError = toJobError(error);
      const retry = isRetryable(jobError) && job.attemptsMade + 1 < (job.opts.attempts ?? 1);
      if (!retry) {
        const cancelled = jobError.code === ErrorCode.TASK_CANCELLED;
        recordJobEnd(task, cancelled ? 'cancelled' : 'failed', job.timestamp);
      }
      // The coded error travels as the failure reason; GET /api/jobs/:id reads it back.
      const reason = JSON.stringify(jobError);
      throw isRetryable(jobError) ? new Error(reason) : new UnrecoverableError(reason);
    } finally {
      unwatch();
    }
  }

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
    // A job whose replica died is taken over at most this many times.
    maxStalledCount: attempts,
  })
  class ConfiguredBullJobProcessor extends BullJobProcessor {}
  return ConfiguredBullJobProcessor;
}
