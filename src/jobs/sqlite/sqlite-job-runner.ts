import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ErrorCode } from '../../common/error-codes';
import { ThrottledWarning } from '../../common/throttled-warning';
import { AppConfig } from '../../config/app-config';
import { isRetryable, JobExecutor, toJobError } from '../job-executor.service';
import { recordJobEnd } from '../job-metrics';
import { SqliteJobStore, type ClaimedJob, type RunEnding } from './sqlite-job-store';

/**
 * Runs the SQLite store's jobs on this process's pool. Every process runs
 * one: each claims at most as many jobs as jobs may hold threads here
 * (`JOBS_MAX_THREADS`), renews its leases, and every `JOBS_POLL_INTERVAL_MS`
 * reads which of its jobs a `DELETE` (on any process) asked to stop. A
 * process that dies stops renewing: after `JOBS_LOCK_DURATION_MS` another
 * process claims its jobs again, up to `JOBS_ATTEMPTS` runs.
 */
@Injectable()
export class SqliteJobRunner
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger(SqliteJobRunner.name);
  private readonly warning = new ThrottledWarning(this.logger);
  /** Unique per process and start, so a restarted process never mistakes old leases for its own. */
  private readonly leaseOwner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly running = new Map<
    string,
    { controller: AbortController; ended: Promise<void> }
  >();
  private timer: NodeJS.Timeout | undefined;
  private claimScheduled = false;
  private renewedAt = 0;
  private stopped = true;

  constructor(
    private readonly store: SqliteJobStore,
    private readonly executor: JobExecutor,
    private readonly config: AppConfig,
  ) {}

  /** Claims only once the whole application, the pool's warm threads included, is up. */
  onApplicationBootstrap(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.tick(), this.config.jobs.pollIntervalMs).unref();
    this.claimSoon();
  }

  /** No new claims once shutdown starts; running jobs end with the pool's drain. */
  beforeApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Waits (bounded by the drain budget) for running jobs to record how they ended, then closes the file. */
  async onApplicationShutdown(): Promise<void> {
    this.beforeApplicationShutdown();
    const ended = Promise.allSettled([...this.running.values()].map((run) => run.ended));
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise((resolve) => {
      timer = setTimeout(resolve, this.config.shutdown.timeoutMs);
    });
    await Promise.race([ended, budget]);
    clearTimeout(timer);
    this.store.close();
  }

  /** A job was just submitted here: claim it without waiting for the next poll. */
  claimSoon(): void {
    if (this.claimScheduled || this.stopped) return;
    this.claimScheduled = true;
    // One claim for the submissions of this turn of the event loop.
    setImmediate(() => {
      this.claimScheduled = false;
      this.guarded(() => this.claim());
    });
  }

  /** Aborts the job if this process runs it; true when it did. */
  abortHere(id: string): boolean {
    const run = this.running.get(id);
    run?.controller.abort();
    return run !== undefined;
  }

  private tick(): void {
    this.guarded(() => {
      const now = Date.now();
      if (this.running.size > 0) {
        const { lockDurationMs } = this.config.jobs;
        if (now - this.renewedAt >= lockDurationMs / 3) {
          this.store.renewLeases(this.leaseOwner, lockDurationMs, now);
          this.renewedAt = now;
        }
        for (const id of this.store.cancelRequested(this.leaseOwner)) this.abortHere(id);
      }
      for (const job of this.store.failAbandoned(now)) {
        recordJobEnd(job.task, 'failed', job.createdAt);
      }
      this.claim();
    });
  }

  private claim(): void {
    if (this.stopped) return;
    // Full: no claim, and no write lock taken for nothing.
    const free = this.config.scheduler.jobsMaxThreads - this.running.size;
    if (free <= 0) return;
    const claimed = this.store.claim(this.leaseOwner, free, this.config.jobs.lockDurationMs);
    if (claimed.length > 0) this.renewedAt = Date.now();
    for (const job of claimed) this.start(job);
  }

  private start(job: ClaimedJob): void {
    const controller = new AbortController();
    const ended = this.executor
      .execute(job.payload, controller.signal, ({ fraction, message }) =>
        this.guarded(() => this.store.progress(job.id, this.leaseOwner, fraction, message)),
      )
      .then(
        (result): RunEnding => ({ status: 'succeeded', result }),
        (error: unknown): RunEnding => {
          const jobError = toJobError(error);
          if (jobError.code === ErrorCode.TASK_CANCELLED && controller.signal.aborted) {
            return {
              status: 'cancelled',
              error: { code: jobError.code, detail: 'The job was cancelled' },
            };
          }
          if (isRetryable(jobError) && job.attempts < job.maxAttempts) {
            return { status: 'retry', error: jobError };
          }
          return { status: 'failed', error: jobError };
        },
      )
      .then((ending) => {
        const recorded = this.store.finish(job.id, this.leaseOwner, ending);
        if (recorded !== undefined && ending.status !== 'retry') {
          recordJobEnd(recorded.task, ending.status, recorded.createdAt);
        }
      })
      .catch((error: Error) => this.warning.warn(`Job ${job.id}: ${error.message}`))
      .finally(() => {
        this.running.delete(job.id);
        this.claimSoon();
      });
    this.running.set(job.id, { controller, ended });
  }

  /** A busy or broken file is logged (throttled) and tried again on the next poll. */
  private guarded(work: () => void): void {
    try {
      work();
    } catch (error) {
      this.warning.warn(`SQLite job store: ${(error as Error).message}`);
    }
  }
}
