import { randomUUID } from 'node:crypto';
import { ThrottledWarning } from '../common/throttled-warning';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Job, JobType, Queue } from 'bullmq';
import { AppError, Errors } from '../common/app-error';
import { ErrorCode } from '../common/error-codes';
import { JOBS_QUEUE, type BullJobData } from './bull-jobs.constants';
import { CancelSignals } from './cancel-signals.service';
import { toJobError } from './job-executor.service';
import { recordJobEnd, trackQueueDepth } from './job-metrics';
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

/** Longest a Redis call may take before the request is answered QUEUE_UNAVAILABLE. */
const REDIS_ANSWER_MS = 3000;
/** How long `DELETE` waits for a running job to be aborted by the replica running it. */
const CANCEL_WAIT_MS = 5000;

const QUEUED_STATES: JobType[] = ['waiting', 'delayed', 'prioritized', 'waiting-children'];
const TYPES_BY_STATUS: Record<JobStatus, JobType[]> = {
  queued: QUEUED_STATES,
  running: ['active'],
  succeeded: ['completed'],
  failed: ['failed'],
  cancelled: ['failed'],
};

/**
 * The BullMQ backend's API side (the producer): submissions, status, cancel
 * and lists read and write the shared queue in Redis. Any replica answers
 * for any job. The runs happen in `BullJobProcessor`, on whichever replica
 * takes them.
 */
@Injectable()
export class BullJobStore extends JobStore implements OnModuleDestroy {
  private readonly logger = new Logger(BullJobStore.name);
  private readonly untrack: () => void;
  private readonly redisWarning = new ThrottledWarning(this.logger);

  constructor(
    @InjectQueue(JOBS_QUEUE) private readonly queue: Queue<BullJobData, JobResult>,
    private readonly cancels: CancelSignals,
  ) {
    super();
    // Without a listener an 'error' event would end the process.
    queue.on('error', (error: Error) => this.logError(error));
    this.untrack = trackQueueDepth(() => this.counts(), 'max');
  }

  onModuleDestroy(): void {
    this.untrack();
  }

  async submit(payload: JobPayload): Promise<JobView> {
    const data: BullJobData = {
      task: payload.task,
      input: payload.input,
      encrypt: payload.encrypt,
      ...(payload.body === undefined ? {} : { body: Buffer.from(payload.body).toString('base64') }),
    };
    const job = await this.redis(() => this.queue.add(payload.task, data, { jobId: randomUUID() }));
    return this.view(job, 'queued');
  }

  async get(id: string): Promise<JobView | undefined> {
    const found = await this.read(id);
    if (found !== undefined) return this.view(found.job, found.state);
    const tombstone = await this.redis(() => this.cancels.readTombstone(id));
    return tombstone === null ? undefined : (JSON.parse(tombstone) as JobView);
  }

  async cancel(id: string): Promise<JobView | undefined> {
    const found = await this.read(id);
    if (found === undefined) return this.get(id);
    const { job, state } = found;
    if (QUEUED_STATES.includes(state as JobType) && (await this.removeQueued(job))) {
      return this.tombstone(job);
    }
    if (state === 'completed' || state === 'failed') return this.view(job, state);
    // Running (or taken between the two reads): the replica running it aborts it.
    await this.redis(() => this.cancels.request(id));
    const until = Date.now() + CANCEL_WAIT_MS;
    for (;;) {
      const current = await this.get(id);
      if (current === undefined || !['queued', 'running'].includes(current.status)) return current;
      if (Date.now() > until) return current;
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  /**
   * BullMQ pages each state's set on its own, so the first `offset + limit + 1`
   * of every set asked for are read, merged (most recent activity first) and
   * cut here: exact pages, at a cost that grows with the offset (bounded by
   * the query's maximum).
   */
  async list({ status, limit, offset }: JobListQuery): Promise<JobPage> {
    const types =
      status === undefined
        ? [...new Set(Object.values(TYPES_BY_STATUS).flat())]
        : TYPES_BY_STATUS[status];
    const candidates = await this.redis(() => this.queue.getJobs(types, 0, offset + limit, false));
    const recent = (job: Job) => job.finishedOn ?? job.processedOn ?? job.timestamp;
    const matching = candidates
      .filter((job): job is Job<BullJobData, JobResult> => job !== undefined)
      .filter((job) => {
        // failed and cancelled share BullMQ's failed set; the stored error tells them apart.
        if (status !== 'failed' && status !== 'cancelled') return true;
        const cancelled = parseFailure(job.failedReason).code === ErrorCode.TASK_CANCELLED;
        return cancelled === (status === 'cancelled');
      })
      .sort((a, b) => recent(b) - recent(a));
    const found = await Promise.all(
      matching.slice(offset, offset + limit).map((job) => this.read(job.id as string)),
    );
    const items = found
      .filter((entry) => entry !== undefined)
      .map(({ job, state }) => this.view(job, state));
    return { items, ...(matching.length > offset + limit ? { nextOffset: offset + limit } : {}) };
  }

  async counts(): Promise<Partial<Record<JobStatus, number>>> {
    const counts = await this.redis(() =>
      this.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed'),
    );
    const sum = (states: string[]) =>
      states.reduce((total, state) => total + (counts[state] ?? 0), 0);
    // Cancelled running jobs are counted among failed: one set holds both.
    return {
      queued: sum(['waiting', 'delayed', 'prioritized']),
      running: sum(['active']),
      succeeded: sum(['completed']),
      failed: sum(['failed']),
    };
  }

  /**
   * The state first, then the job: the job read is then at least as recent as
   * the state (a job read first may finish before its state is read, and
   * would show `succeeded` without its result).
   */
  private async read(
    id: string,
  ): Promise<{ job: Job<BullJobData, JobResult>; state: string } | undefined> {
    const state = await this.redis(() => this.queue.getJobState(id));
    const job = await this.redis(() => this.queue.getJob(id));
    return job === undefined ? undefined : { job, state };
  }

  /** Removes a job that no replica has taken; false when one took it meanwhile (it holds a lock). */
  private async removeQueued(job: Job<BullJobData, JobResult>): Promise<boolean> {
    try {
      await this.redis(() => job.remove());
      return true;
    } catch (error) {
      if (error instanceof AppError && error.code === ErrorCode.QUEUE_UNAVAILABLE) {
        const state = await this.redis(() => job.getState());
        if (state === 'active') return false;
      }
      throw error;
    }
  }

  /** A removed job leaves this record, so that GET still says `cancelled` until the TTL. */
  private async tombstone(job: Job<BullJobData, JobResult>): Promise<JobView> {
    const view: JobView = {
      ...this.view(job, 'waiting'),
      status: 'cancelled',
      finishedAt: new Date().toISOString(),
      error: toJobError(Errors.taskCancelled()),
    };
    await this.redis(() => this.cancels.writeTombstone(view.id, JSON.stringify(view)));
    recordJobEnd(job.name, 'cancelled', job.timestamp);
    return view;
  }

  private view(job: Job<BullJobData, JobResult>, state: string): JobView {
    const error = job.failedReason ? parseFailure(job.failedReason) : undefined;
    const id = job.id as string;
    return {
      id,
      task: job.data.task,
      status: statusOf(state, error),
      attempts: Math.max(job.attemptsStarted, job.attemptsMade),
      createdAt: iso(job.timestamp) as string,
      startedAt: iso(job.processedOn),
      finishedAt: state === 'completed' || state === 'failed' ? iso(job.finishedOn) : undefined,
      ...(state === 'completed' ? { result: job.returnvalue } : {}),
      ...(state === 'failed' && error !== undefined ? { error } : {}),
      links: { self: jobLink(id) },
    };
  }

  /** Every Redis round trip: bounded in time, and any failure is QUEUE_UNAVAILABLE. */
  private async redis<T>(call: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${REDIS_ANSWER_MS} ms`)),
        REDIS_ANSWER_MS,
      );
    });
    try {
      return await Promise.race([call(), deadline]);
    } catch (error) {
      if (error instanceof AppError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      this.logError(error as Error);
      throw Errors.queueUnavailable(message);
    } finally {
      clearTimeout(timer);
    }
  }

  private logError(error: Error): void {
    this.redisWarning.warn(`Redis: ${error.message}`);
  }
}

function statusOf(state: string, error: JobError | undefined): JobStatus {
  switch (state) {
    case 'active':
      return 'running';
    case 'completed':
      return 'succeeded';
    case 'failed':
      return error?.code === ErrorCode.TASK_CANCELLED ? 'cancelled' : 'failed';
    default:
      return 'queued';
  }
}

/** The processor stores the coded error as JSON; BullMQ's own reasons (a stall) are a crash. */
function parseFailure(reason: string): JobError {
  try {
    const parsed = JSON.parse(reason) as Partial<JobError>;
    if (typeof parsed.code === 'string' && typeof parsed.detail === 'string') {
      return { code: parsed.code, detail: parsed.detail };
    }
  } catch {
    // not ours
  }
  return toJobError(Errors.workerCrashed(reason));
}
