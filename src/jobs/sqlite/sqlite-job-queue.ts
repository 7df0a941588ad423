import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AppError, Errors } from '../../common/app-error';
import { recordJobEnd, trackQueueDepth } from '../job-metrics';
import {
  JobQueue,
  type JobCaller,
  type JobEvents,
  type JobStoreHealth,
  type JobSubmission,
  type Submitted,
} from '../job-queue';
import {
  isFinished,
  type JobListQuery,
  type JobPage,
  type JobStatus,
  type JobView,
} from '../job.types';
import { SqliteJobRunner } from './sqlite-job-runner';
import { SqliteJobStore } from './sqlite-job-store';
import { SqliteStoreWatch } from './sqlite-store-watch';
import { StoreWriter, type WriteArgs, type WriteMethod, type WriteResult } from './store-writer';

/** How long `DELETE` waits for a running job to be aborted by the process running it. */
const CANCEL_WAIT_MS = 5000;
const CANCEL_POLL_MS = 25;

/**
 * The default backend: one SQLite file shared by every process of the
 * machine (`JOBS_SQLITE_PATH`). Any process answers for any job; the
 * runners of all processes share the work. Reads go to `store`, writes to
 * `writer` (a group commit on a thread, ADR 0022). Store failures (a file that cannot be written,
 * a lock held past the busy timeout) are QUEUE_UNAVAILABLE, and so is every call while the file
 * at the path is no longer the store this process opened (`SqliteStoreWatch`).
 */
@Injectable()
export class SqliteJobQueue extends JobQueue implements OnModuleDestroy {
  private readonly untrack: () => void;

  constructor(
    private readonly store: SqliteJobStore,
    private readonly writer: StoreWriter,
    private readonly runner: SqliteJobRunner,
    private readonly watch: SqliteStoreWatch,
  ) {
    super();
    // Every process reads the one file: the cluster shows the largest (latest) reading, not a sum.
    this.untrack = trackQueueDepth(() => this.counts(), 'max');
  }

  onModuleDestroy(): void {
    this.untrack();
  }

  submit({ payload, owner, idempotency }: JobSubmission): Promise<Submitted> {
    const submitted = this.write('insert', [payload, owner, idempotency]);
    // In the insert's transaction, after it: one commit and one reply for both (ADR 0030).
    this.runner.claimSoon();
    return submitted;
  }

  get(id: string, caller: JobCaller): Promise<JobView | undefined> {
    return this.call(() => this.store.get(id, caller));
  }

  list(query: JobListQuery, caller: JobCaller): Promise<JobPage> {
    return this.call(() => this.store.list(query, caller));
  }

  async cancel(id: string, caller: JobCaller): Promise<JobView | undefined> {
    const job = await this.get(id, caller);
    if (job === undefined || isFinished(job.status)) return job;
    const cancelledQueued = await this.write('cancelQueued', [id]);
    if (cancelledQueued !== undefined) {
      recordJobEnd(cancelledQueued.task, 'cancelled', cancelledQueued.createdAt);
      return this.get(id, caller);
    }
    // Running: the process running it reads the flag on its next poll (or now, if it is this one).
    await this.write('requestCancel', [id]);
    this.runner.abortHere(id);
    const until = Date.now() + CANCEL_WAIT_MS;
    for (;;) {
      const current = await this.get(id, caller);
      if (current === undefined || isFinished(current.status) || Date.now() > until) return current;
      await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
    }
  }

  events(id: string, caller: JobCaller, afterId: number): Promise<JobEvents | undefined> {
    return this.call(() => {
      // The job first: the events read after it are at least as recent.
      const job = this.store.get(id, caller);
      return job === undefined ? undefined : { job, events: this.store.events(id, afterId) };
    });
  }

  counts(): Promise<Partial<Record<JobStatus, number>>> {
    return this.call(() => this.store.counts());
  }

  override health(): JobStoreHealth {
    return this.watch.health();
  }

  private call<T>(work: () => T): Promise<T> {
    const refusal = this.watch.refusal();
    if (refusal !== undefined) return Promise.reject(refusal);
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(unavailable(error));
    }
  }

  private write<M extends WriteMethod>(method: M, args: WriteArgs<M>): Promise<WriteResult<M>> {
    return this.writer
      .call(method, args)
      .catch((error: unknown) => Promise.reject(unavailable(error)));
  }
}

/** Codes pass; anything else SQLite threw (a full disk, a lock held too long) is QUEUE_UNAVAILABLE. */
function unavailable(error: unknown): AppError {
  return error instanceof AppError
    ? error
    : Errors.queueUnavailable(`SQLite: ${(error as Error).message}`);
}
