import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Errors } from '../common/app-error';
import { ErrorCode } from '../common/error-codes';
import { AppConfig } from '../config/app-config';
import { JobExecutor, toJobError } from './job-executor.service';
import { recordJobEnd, trackQueueDepth, type JobOutcome } from './job-metrics';
import { JobStore } from './job-store';
import {
  iso,
  jobLink,
  type JobError,
  type JobListQuery,
  type JobPage,
  type JobPayload,
  type JobResult,
  type JobStatus,
  type JobView,
} from './job.types';

interface MemoryJob {
  readonly id: string;
  readonly task: string;
  readonly createdAt: number;
  /** Dropped when the job ends, so a finished job holds no body. */
  payload: JobPayload | undefined;
  status: JobStatus;
  attempts: number;
  startedAt?: number;
  finishedAt?: number;
  result?: JobResult;
  error?: JobError;
  controller?: AbortController;
  /** Resolves when a running job has ended. */
  ended?: Promise<void>;
}

const UNFINISHED: ReadonlySet<JobStatus> = new Set(['queued', 'running']);

/**
 * The default backend: jobs in this process's memory, run on its own pool,
 * as many at a time as jobs may hold threads (`JOBS_MAX_THREADS`). Bounded (`JOBS_MAX_STORED`), finished
 * jobs kept for `JOBS_RESULT_TTL_SECONDS`, and everything is lost when the
 * process stops: a job is only as durable as the process that took it.
 */
@Injectable()
export class MemoryJobStore extends JobStore implements OnModuleDestroy {
  /** Insertion order is creation order. */
  private readonly jobs = new Map<string, MemoryJob>();
  private readonly waiting: MemoryJob[] = [];
  private running = 0;
  private readonly concurrency: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly untrack: () => void;

  constructor(
    private readonly config: AppConfig,
    private readonly executor: JobExecutor,
  ) {
    super();
    // More would only wait in the scheduler, where the jobs' cap holds them anyway.
    this.concurrency = config.scheduler.jobsMaxThreads;
    this.sweeper = setInterval(() => this.sweep(), 60_000).unref();
    this.untrack = trackQueueDepth(() => this.counts(), 'sum');
    if (config.cluster.workers > 1) {
      // Each process keeps its own jobs, and the cluster spreads requests over processes.
      new Logger(MemoryJobStore.name).warn(
        `CLUSTER_WORKERS=${config.cluster.workers} without REDIS_URL: a job is only visible ` +
          'through the process that took it; set REDIS_URL to share jobs across processes',
      );
    }
  }

  /** Running jobs are left to the pool's drain; what is still queued is lost (docs/jobs.md). */
  onModuleDestroy(): void {
    clearInterval(this.sweeper);
    this.untrack();
  }

  submit(payload: JobPayload): Promise<JobView> {
    this.sweep();
    const { maxStored } = this.config.jobs;
    if (this.jobs.size >= maxStored) this.evictFinished(this.jobs.size - maxStored + 1);
    if (this.jobs.size >= maxStored) throw Errors.jobQueueFull(maxStored);
    const job: MemoryJob = {
      id: randomUUID(),
      task: payload.task,
      createdAt: Date.now(),
      payload,
      status: 'queued',
      attempts: 0,
    };
    this.jobs.set(job.id, job);
    this.waiting.push(job);
    this.pump();
    return Promise.resolve(this.view(job));
  }

  get(id: string): Promise<JobView | undefined> {
    this.sweep();
    const job = this.jobs.get(id);
    return Promise.resolve(job === undefined ? undefined : this.view(job));
  }

  async cancel(id: string): Promise<JobView | undefined> {
    const job = this.jobs.get(id);
    if (job === undefined) return undefined;
    if (job.status === 'queued') {
      this.waiting.splice(this.waiting.indexOf(job), 1);
      this.finish(job, 'cancelled', { error: toJobError(Errors.taskCancelled()) });
    } else if (job.status === 'running') {
      // The pool stops the thread; the run ends as TASK_CANCELLED.
      job.controller?.abort();
      await job.ended;
    }
    return this.view(job);
  }

  list({ status, limit, offset }: JobListQuery): Promise<JobPage> {
    this.sweep();
    const matching = [...this.jobs.values()]
      .reverse()
      .filter((job) => status === undefined || job.status === status);
    const items = matching.slice(offset, offset + limit).map((job) => this.view(job));
    const next = offset + limit;
    return Promise.resolve({ items, ...(next < matching.length ? { nextOffset: next } : {}) });
  }

  counts(): Promise<Partial<Record<JobStatus, number>>> {
    const counts: Record<JobStatus, number> = {
      queued: 0,
      running: 0,
      succeeded: 0,
      failed: 0,
      cancelled: 0,
    };
    for (const job of this.jobs.values()) counts[job.status] += 1;
    return Promise.resolve(counts);
  }

  private pump(): void {
    while (this.running < this.concurrency) {
      const job = this.waiting.shift();
      if (job === undefined) return;
      this.start(job);
    }
  }

  private start(job: MemoryJob): void {
    const payload = job.payload as JobPayload;
    const controller = new AbortController();
    Object.assign(job, {
      status: 'running',
      attempts: job.attempts + 1,
      startedAt: Date.now(),
      controller,
    });
    this.running += 1;
    job.ended = this.executor
      .execute(payload, controller.signal)
      .then(
        (result) => this.finish(job, 'succeeded', { result }),
        (error: unknown) => {
          const jobError = toJobError(error);
          const cancelled = jobError.code === ErrorCode.TASK_CANCELLED;
          this.finish(job, cancelled ? 'cancelled' : 'failed', { error: jobError });
        },
      )
      .finally(() => {
        this.running -= 1;
        job.controller = undefined;
        this.pump();
      });
  }

  private finish(
    job: MemoryJob,
    outcome: JobOutcome,
    ending: { result?: JobResult; error?: JobError },
  ): void {
    Object.assign(job, { status: outcome, finishedAt: Date.now(), payload: undefined }, ending);
    recordJobEnd(job.task, outcome, job.createdAt);
  }

  /** Drops finished jobs past their TTL. */
  private sweep(): void {
    const expiredBefore = Date.now() - this.config.jobs.resultTtlSeconds * 1000;
    for (const job of this.jobs.values()) {
      if (job.finishedAt !== undefined && job.finishedAt < expiredBefore) this.jobs.delete(job.id);
    }
  }

  /** Makes room by dropping the oldest finished jobs; queued and running ones are never dropped. */
  private evictFinished(count: number): void {
    let left = count;
    for (const job of this.jobs.values()) {
      if (left === 0) return;
      if (UNFINISHED.has(job.status)) continue;
      this.jobs.delete(job.id);
      left -= 1;
    }
  }

  private view(job: MemoryJob): JobView {
    return {
      id: job.id,
      task: job.task,
      status: job.status,
      attempts: job.attempts,
      createdAt: iso(job.createdAt) as string,
      startedAt: iso(job.startedAt),
      finishedAt: iso(job.finishedAt),
      result: job.result,
      error: job.error,
      links: { self: jobLink(job.id) },
    };
  }
}
