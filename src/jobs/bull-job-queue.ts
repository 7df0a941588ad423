import { createHash, randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Job, JobType, Queue } from 'bullmq';
import { AppError, Errors } from '../common/app-error';
import { ErrorCode } from '../common/error-codes';
import { ThrottledWarning } from '../common/throttled-warning';
import { AppConfig } from '../config/app-config';
import { traceIdOf } from '../tracing/job-trace';
import { parseEvents } from './bull-job-events';
import {
  bodyKey,
  indexKey,
  JOBS_QUEUE,
  ownerIndexKey,
  storedBytesKey,
  type BullJobData,
} from './bull-jobs.constants';
import { CancelSignals } from './cancel-signals.service';
import { decodeCursor, encodeCursor, type JobPosition } from './job-cursor';
import { toJobError } from './job-executor.service';
import { recordJobEnd, trackQueueDepth } from './job-metrics';
import {
  JobQueue,
  mayAccess,
  type IdempotencyClaim,
  type JobCaller,
  type JobEvents,
  type JobSubmission,
  type Submitted,
} from './job-queue';
import {
  isFinished,
  iso,
  jobLink,
  type JobError,
  type JobListQuery,
  type JobPage,
  type JobProgress,
  type JobResult,
  type JobStatus,
  type JobView,
} from './job.types';

/**
 * Longest a Redis call may take before the request is answered
 * QUEUE_UNAVAILABLE. A Redis that is down is refused at once (`connected`);
 * this bounds a Redis that answers slowly, and must not fail a busy one.
 */
const REDIS_ANSWER_MS = 3000;
/** How long `DELETE` waits for a running job to be aborted by the replica running it. */
const CANCEL_WAIT_MS = 5000;
/** Index entries read per round trip while a listing looks for jobs of one status. */
const LIST_CHUNK = 50;
/** Index entries a listing reads at most: a page filtered by a rare status ends early, with a cursor. */
const LIST_SCAN_MAX = 1000;

const QUEUED_STATES: JobType[] = ['waiting', 'delayed', 'prioritized', 'waiting-children'];

type BullJob = Job<BullJobData, JobResult>;

/** A removed (cancelled while queued) job's record: its view, and how many events it had. */
type Tombstone = JobView & { readonly eventCount?: number };

/**
 * The BullMQ backend's API side (the producer): submissions, status, cancel
 * and lists read and write the shared queue in Redis. Any replica answers
 * for any job. The runs happen in `BullJobProcessor`, on whichever replica
 * takes them. Besides BullMQ's own keys: an index by creation (cursor pages
 * whose cost does not grow with their depth), and the bytes of unfinished jobs.
 */
@Injectable()
export class BullJobQueue extends JobQueue implements OnModuleDestroy {
  private readonly logger = new Logger(BullJobQueue.name);
  private readonly untrack: () => void;
  private readonly redisWarning = new ThrottledWarning(this.logger);
  private readonly prefix: string;

  constructor(
    @InjectQueue(JOBS_QUEUE) private readonly queue: Queue<BullJobData, JobResult>,
    private readonly cancels: CancelSignals,
    private readonly config: AppConfig,
  ) {
    super();
    this.prefix = config.jobs.queuePrefix;
    // Without a listener an 'error' event would end the process.
    queue.on('error', (error: Error) => this.logError(error));
    this.untrack = trackQueueDepth(() => this.counts(), 'max');
  }

  onModuleDestroy(): void {
    this.untrack();
  }

  async submit({ payload, owner, idempotency }: JobSubmission): Promise<Submitted> {
    const id = idempotency === undefined ? randomUUID() : idempotentId(owner, idempotency.key);
    if (idempotency !== undefined) {
      const existing = await this.read(id);
      if (existing !== undefined) return this.replay(existing.job, existing.state, idempotency);
    }
    const body =
      payload.body === undefined
        ? undefined
        : Buffer.from(payload.body.buffer, payload.body.byteOffset, payload.body.byteLength);
    // Counted as Redis holds them: the input and the trace context as UTF-8 text, the body as
    // its own bytes.
    const bytes =
      Buffer.byteLength(JSON.stringify(payload.input)) +
      (body?.length ?? 0) +
      (payload.trace === undefined ? 0 : Buffer.byteLength(payload.trace));
    await this.checkBounds(bytes);
    const nonce = randomUUID();
    // The body is a value of its own, written from the Buffer as it is: BullMQ's data is JSON,
    // and a body in it would be base64-encoded and stringified here, and parsed back and decoded
    // by every read of the job, on the event loop (ADR 0053). Written first: a replica may take
    // the job as soon as it is added.
    let stored: string | undefined;
    if (body !== undefined) {
      const key = bodyKey(this.prefix, nonce);
      await this.redis(() => this.cancels.redis.set(key, body));
      stored = key;
    }
    const data: BullJobData = {
      task: payload.task,
      input: payload.input,
      encrypt: payload.encrypt,
      owner,
      bytes,
      ...(stored === undefined ? {} : { bodyKey: stored }),
      ...(idempotency === undefined ? {} : { fingerprint: idempotency.fingerprint, nonce }),
    };
    const createdAt = Date.now();
    // The submitter's context goes where BullMQ's own telemetry keeps it: the job's options,
    // which a retry and a stalled job's takeover keep (ADR 0048).
    const telemetry = payload.trace === undefined ? {} : { telemetry: { metadata: payload.trace } };
    let job: BullJob;
    try {
      job = await this.redis(() =>
        this.queue.add(payload.task, data, { jobId: id, timestamp: createdAt, ...telemetry }),
      );
    } catch (error) {
      if (stored !== undefined) this.dropBody(stored);
      throw error;
    }
    if (idempotency !== undefined) {
      // BullMQ keeps the first job with an id; a concurrent submission may have been first.
      const first = await this.read(id);
      if (first !== undefined && first.job.data.nonce !== nonce) {
        if (stored !== undefined) this.dropBody(stored);
        return this.replay(first.job, first.state, idempotency);
      }
    }
    await this.index({ createdAt, id }, owner, bytes);
    return { job: this.view(job, 'waiting'), created: true };
  }

  /** A new job into the indexes by creation (all, and its owner's), its bytes into the bound's counter. */
  private async index(position: JobPosition, owner: string, bytes: number): Promise<void> {
    const member = indexMember(position);
    await this.redis(() =>
      this.cancels.redis
        .multi()
        .incrby(storedBytesKey(this.prefix), bytes)
        .zadd(indexKey(this.prefix), 0, member)
        .zadd(ownerIndexKey(this.prefix, owner), 0, member)
        .exec(),
    );
  }

  async get(id: string, caller: JobCaller): Promise<JobView | undefined> {
    const found = await this.read(id);
    if (found !== undefined) {
      return mayAccess(caller, found.job.data.owner)
        ? this.view(found.job, found.state)
        : undefined;
    }
    const tombstone = await this.tombstone(id);
    if (tombstone === undefined || !mayAccess(caller, tombstone.owner)) return undefined;
    return withoutEventCount(tombstone);
  }

  async cancel(id: string, caller: JobCaller): Promise<JobView | undefined> {
    const found = await this.read(id);
    if (found === undefined || !mayAccess(caller, found.job.data.owner))
      return this.get(id, caller);
    const { job, state } = found;
    if (QUEUED_STATES.includes(state as JobType)) {
      // Its log goes with it: the tombstone remembers how many events there were.
      const { count } = await this.redis(() => this.queue.getJobLogs(id, 0, 0));
      if (await this.removeQueued(job)) return this.bury(job, 1 + count);
    }
    if (state === 'completed' || state === 'failed') return this.view(job, state);
    // Running (or taken between the two reads): the replica running it aborts it.
    await this.redis(() => this.cancels.request(id));
    const until = Date.now() + CANCEL_WAIT_MS;
    for (;;) {
      const current = await this.get(id, caller);
      if (current === undefined || isFinished(current.status)) return current;
      if (Date.now() > until) return current;
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  /**
   * Reads the index (newest first) from the cursor on, in chunks, keeping
   * the caller's jobs of the asked status; entries of jobs that expired are
   * dropped from the index on the way.
   */
  async list({ status, limit, cursor }: JobListQuery, caller: JobCaller): Promise<JobPage> {
    const key = caller.admin ? indexKey(this.prefix) : ownerIndexKey(this.prefix, caller.id);
    let from = cursor === undefined ? '+' : `(${indexMember(decodeCursor(cursor))}`;
    const items: JobView[] = [];
    let last: string | undefined;
    let exhausted = false;
    for (let scanned = 0; items.length < limit && scanned < LIST_SCAN_MAX;) {
      const members = await this.redis(() =>
        this.cancels.redis.zrevrangebylex(key, from, '-', 'LIMIT', 0, LIST_CHUNK),
      );
      scanned += members.length;
      const found = await Promise.all(members.map((member) => this.read(memberId(member))));
      const gone: string[] = [];
      let index = 0;
      for (; index < members.length && items.length < limit; index++) {
        const member = members[index] as string;
        last = member;
        const entry = found[index];
        if (entry === undefined) {
          gone.push(member);
        } else {
          const view = this.view(entry.job, entry.state);
          if (status === undefined || view.status === status) items.push(view);
        }
      }
      if (gone.length > 0) await this.unindex(key, gone);
      if (index === members.length && members.length < LIST_CHUNK) {
        exhausted = true;
        break;
      }
      from = `(${last as string}`;
    }
    return {
      items,
      ...(exhausted || last === undefined
        ? {}
        : { nextCursor: encodeCursor(memberPosition(last)) }),
    };
  }

  /** Drops jobs Redis no longer holds from the index of all jobs and from `key`'s. */
  private async unindex(key: string, gone: string[]): Promise<void> {
    await this.redis(() =>
      this.cancels.redis
        .multi()
        .zrem(indexKey(this.prefix), ...gone)
        .zrem(key, ...gone)
        .exec(),
    );
  }

  async events(id: string, caller: JobCaller, afterId: number): Promise<JobEvents | undefined> {
    const found = await this.read(id);
    if (found === undefined) {
      const tombstone = await this.tombstone(id);
      if (tombstone === undefined || !mayAccess(caller, tombstone.owner)) return undefined;
      const job = withoutEventCount(tombstone);
      const eventCount = tombstone.eventCount ?? 1;
      const end = {
        id: eventCount + 1,
        type: 'status' as const,
        status: job.status,
        at: job.finishedAt ?? job.createdAt,
      };
      return { job, events: end.id > afterId ? [end] : [] };
    }
    if (!mayAccess(caller, found.job.data.owner)) return undefined;
    const job = this.view(found.job, found.state);
    // Event 1 is the submission (from the job's timestamp); the log holds the rest, from 2 on.
    const queued = { id: 1, type: 'status' as const, status: 'queued' as const, at: job.createdAt };
    const { logs } = await this.redis(() =>
      this.queue.getJobLogs(id, Math.max(0, afterId - 1), -1, true),
    );
    const logged = parseEvents(logs, Math.max(2, afterId + 1));
    return { job, events: afterId < 1 ? [queued, ...logged] : logged };
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
   * Unfinished jobs are bounded here, by count and by the bytes they hold;
   * finished ones by BullMQ's `removeOnComplete/removeOnFail` (age and count).
   * Checked, then added: replicas submitting at once may pass it by a few.
   */
  private async checkBounds(bytes: number): Promise<void> {
    const { maxStored, maxStoredBytes } = this.config.jobs;
    if (bytes > maxStoredBytes) throw Errors.payloadTooLarge(maxStoredBytes);
    const [counts, stored] = await Promise.all([
      this.redis(() => this.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active')),
      this.redis(() => this.cancels.redis.get(storedBytesKey(this.prefix))),
    ]);
    const unfinished = Object.values(counts).reduce((total, count) => total + count, 0);
    if (unfinished >= maxStored || Number(stored ?? 0) + bytes > maxStoredBytes) {
      throw Errors.jobQueueFull(maxStored);
    }
  }

  private replay(job: BullJob, state: string, idempotency: IdempotencyClaim): Submitted {
    if (job.data.fingerprint !== idempotency.fingerprint) {
      throw Errors.idempotencyKeyReused(idempotency.key, job.id as string);
    }
    return { job: this.view(job, state), created: false };
  }

  /**
   * The state first, then the job: the job read is then at least as recent as
   * the state (a job read first may finish before its state is read, and
   * would show `succeeded` without its result).
   */
  private async read(id: string): Promise<{ job: BullJob; state: string } | undefined> {
    const state = await this.redis(() => this.queue.getJobState(id));
    if (state === 'unknown') return undefined;
    const job = await this.redis(() => this.queue.getJob(id));
    return job === undefined ? undefined : { job, state };
  }

  private async tombstone(id: string): Promise<Tombstone | undefined> {
    const text = await this.redis(() => this.cancels.readTombstone(id));
    return text === null ? undefined : (JSON.parse(text) as Tombstone);
  }

  /** Removes a job that no replica has taken; false when one took it meanwhile (it holds a lock). */
  private async removeQueued(job: BullJob): Promise<boolean> {
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

  /** A body no job holds (its submission lost a race, or was not added): best effort, a warning at worst. */
  private dropBody(key: string): void {
    this.cancels.redis.del(key).catch((error: Error) => this.logError(error));
  }

  /** A removed job leaves this record, so that GET still says `cancelled` until the TTL. */
  private async bury(job: BullJob, eventCount: number): Promise<JobView> {
    const view: JobView = {
      ...this.view(job, 'waiting'),
      status: 'cancelled',
      finishedAt: new Date().toISOString(),
      error: { code: ErrorCode.TASK_CANCELLED, detail: 'The job was cancelled' },
    };
    const tombstone: Tombstone = { ...view, eventCount };
    await this.redis(() => this.cancels.writeTombstone(view.id, JSON.stringify(tombstone)));
    const { bodyKey: body, bytes } = job.data;
    await this.redis(() => {
      const both = this.cancels.redis.multi().decrby(storedBytesKey(this.prefix), bytes ?? 0);
      return (body === undefined ? both : both.del(body)).exec();
    });
    recordJobEnd(job.name, 'cancelled', job.timestamp);
    return view;
  }

  private view(job: BullJob, state: string): JobView {
    const error = job.failedReason ? parseFailure(job.failedReason) : undefined;
    const id = job.id as string;
    const progress = progressOf(job.progress);
    const traceId = traceIdOf(job.opts.telemetry?.metadata);
    return {
      id,
      task: job.data.task,
      owner: job.data.owner,
      status: statusOf(state, error),
      attempts: Math.max(job.attemptsStarted, job.attemptsMade),
      createdAt: iso(job.timestamp) as string,
      startedAt: iso(job.processedOn),
      finishedAt: state === 'completed' || state === 'failed' ? iso(job.finishedOn) : undefined,
      ...(progress === undefined ? {} : { progress }),
      ...(state === 'completed' ? { result: job.returnvalue } : {}),
      ...(state === 'failed' && error !== undefined ? { error } : {}),
      ...(traceId === undefined ? {} : { traceId }),
      links: { self: jobLink(id) },
    };
  }

  /**
   * Every Redis round trip: refused at once while the connection is down,
   * bounded in time otherwise, and any failure is QUEUE_UNAVAILABLE.
   */
  private async redis<T>(call: () => Promise<T>): Promise<T> {
    if (!this.cancels.connected) throw Errors.queueUnavailable('Redis is not connected');
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

/** One job id per owner and key: BullMQ then keeps one job for all retries of a submission. */
function idempotentId(owner: string, key: string): string {
  return `idem-${createHash('sha256').update(owner).update('\n').update(key).digest('hex').slice(0, 40)}`;
}

/** Index members sort by creation time, then id, as text. */
const indexMember = ({ createdAt, id }: JobPosition) =>
  `${String(createdAt).padStart(15, '0')}:${id}`;
const memberId = (member: string) => member.slice(member.indexOf(':') + 1);
const memberPosition = (member: string): JobPosition => ({
  createdAt: Number(member.slice(0, member.indexOf(':'))),
  id: memberId(member),
});

function progressOf(progress: unknown): JobProgress | undefined {
  if (typeof progress !== 'object' || progress === null) return undefined;
  const { fraction } = progress as Partial<JobProgress>;
  return typeof fraction === 'number' ? (progress as JobProgress) : undefined;
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

function withoutEventCount(tombstone: Tombstone): JobView {
  const view: { -readonly [K in keyof Tombstone]?: Tombstone[K] } = { ...tombstone };
  delete view.eventCount;
  return view as JobView;
}
