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
import { activeTracing } from '../../tracing/tracing';
import { isRetryable, JobExecutor, toJobError } from '../job-executor.service';
import { recordJobEnd } from '../job-metrics';
import { SqliteJobStore, type ClaimedJob, type RunEnding } from './sqlite-job-store';
import { SqliteStoreWatch } from './sqlite-store-watch';
import { StoreWriter, type WriteArgs, type WriteMethod } from './store-writer';

/**
 * Runs the SQLite store's jobs on this process's pool. Every process runs
 * one: each claims at most as many jobs as jobs may hold threads here
 * (`JOBS_MAX_THREADS`), renews its leases, and every `JOBS_POLL_INTERVAL_MS`
 * reads which of its jobs a `DELETE` (on any process) asked to stop. A
 * process that dies stops renewing: after `JOBS_LOCK_DURATION_MS` another
 * process claims its jobs again, up to `JOBS_ATTEMPTS` runs. Writes go
 * through the group commit on the writer thread (`StoreWriter`): a claim
 * runs in the transaction of the submissions and the finished runs that
 * called for it, after them, and one claim at a time is in flight.
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
  /** Jobs on a thread now (their end may not be recorded yet). */
  private executing = 0;
  private claiming = false;
  /** A claim was asked for while one was in flight: another follows it. */
  private claimAgain = false;
  private renewedAt = 0;
  private stopped = true;

  constructor(
    private readonly store: SqliteJobStore,
    private readonly writer: StoreWriter,
    private readonly executor: JobExecutor,
    private readonly config: AppConfig,
    private readonly watch: SqliteStoreWatch,
  ) {}

  /** Claims only once the whole application, the pool's warm threads included, is up. */
  onApplicationBootstrap(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.tick(), this.config.jobs.pollIntervalMs).unref();
    this.claim(false);
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
    await this.writer.close();
    this.store.close();
  }

  /** A job is being submitted here: claim it in the submission's transaction, not at the next poll. */
  claimSoon(): void {
    this.claim(true);
  }

  /** Aborts the job if this process runs it; true when it did. */
  abortHere(id: string): boolean {
    const run = this.running.get(id);
    run?.controller.abort();
    return run !== undefined;
  }

  private tick(): void {
    // A lost store is logged once by the watch; polling it would only repeat that.
    if (!this.watch.available) return;
    this.guarded(() => {
      const now = Date.now();
      if (this.running.size > 0) {
        const { lockDurationMs } = this.config.jobs;
        if (now - this.renewedAt >= lockDurationMs / 3) {
          this.background('renewLeases', [this.leaseOwner, lockDurationMs, now]);
          this.renewedAt = now;
        }
        for (const id of this.store.cancelRequested(this.leaseOwner)) this.abortHere(id);
      }
      // Reads first: the usual poll (nothing abandoned, nothing waiting) takes no write lock.
      if (this.store.hasAbandoned(now)) {
        this.writer
          .call('failAbandoned', [now])
          .then((jobs) => {
            for (const job of jobs) recordJobEnd(job.task, 'failed', job.createdAt);
          })
          .catch((error: Error) => this.warn(error));
      }
      this.claim(false);
    });
  }

  /**
   * Claims as many jobs as threads are free here, after the writes asked
   * before it, in their transaction. `known`: a job was just submitted or a
   * thread freed, so no read first (it could not see a write not yet
   * committed; a claim that finds nothing costs the writer a statement).
   */
  private claim(known: boolean): void {
    if (this.stopped || !this.watch.available) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    // Full: no claim, and no write lock taken for nothing.
    const free = this.config.scheduler.jobsMaxThreads - this.executing;
    if (free <= 0) return;
    if (!known && !this.store.hasRunnable()) return;
    this.claiming = true;
    const { lockDurationMs } = this.config.jobs;
    this.writer
      .call('claimRunnable', [this.leaseOwner, free, lockDurationMs], { last: true })
      .then((claimed) => {
        if (claimed.length > 0) this.renewedAt = Date.now();
        for (const job of claimed) this.start(job);
      })
      .catch((error: Error) => this.warn(error))
      .finally(() => {
        this.claiming = false;
        if (this.claimAgain) {
          this.claimAgain = false;
          this.claim(true);
        }
      });
  }

  private start(job: ClaimedJob): void {
    const controller = new AbortController();
    this.executing += 1;
    // A job stored with its submitter's context continues that trace, in whichever run (ADR 0048).
    const trace =
      job.payload.trace === undefined
        ? undefined
        : activeTracing()?.startJobRun(job.payload.trace, {
            jobId: job.id,
            task: job.task,
            attempt: job.attempts,
          });
    const ended = this.executor
      .execute(
        job.payload,
        controller.signal,
        ({ fraction, message }) =>
          this.background('progress', [job.id, this.leaseOwner, fraction, message]),
        trace?.span,
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
        trace?.ended(ending.status, 'error' in ending ? ending.error : undefined);
        // The thread is free: the next claim runs in this end's transaction, after it.
        this.executing -= 1;
        const recorded = this.writer.call('finish', [job.id, this.leaseOwner, ending]);
        // No read here first (ADR 0030): a claim that finds nothing costs the writer a statement.
        this.claim(true);
        return recorded.then((facts) => {
          if (facts !== undefined && ending.status !== 'retry') {
            recordJobEnd(facts.task, ending.status, facts.createdAt);
          }
        });
      })
      .catch((error: Error) => this.warning.warn(`Job ${job.id}: ${error.message}`))
      .finally(() => this.running.delete(job.id));
    this.running.set(job.id, { controller, ended });
  }

  /** A write whose outcome nobody waits for (a lease, a progress report): a failure is logged. */
  private background<M extends WriteMethod>(method: M, args: WriteArgs<M>): void {
    this.writer.call(method, args).catch((error: Error) => this.warn(error));
  }

  /** A busy or broken file is logged (throttled) and tried again on the next poll. */
  private guarded(work: () => void): void {
    try {
      work();
    } catch (error) {
      this.warn(error as Error);
    }
  }

  private warn(error: Error): void {
    this.warning.warn(`SQLite job store: ${error.message}`);
  }
}
