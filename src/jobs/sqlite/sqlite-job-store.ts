import type { IdempotencyClaim, JobCaller } from '../job-queue';
import type { JobEvent, JobPage, JobPayload, JobStatus, JobView } from '../job.types';
import type { OpenedStore } from './sqlite-store-file';
import * as eviction from './store/eviction';
import * as reads from './store/job-reads';
import * as runs from './store/job-runs';
import { insertJob } from './store/job-submission';
import { StoreConnection } from './store/store-connection';
import type { ClaimedJob, EndedJob, RunEnding, SqliteStoreOptions } from './store/store-types';
import * as transactions from './store/transactions';

export type { ClaimedJob, EndedJob, RunEnding, SqliteStoreOptions } from './store/store-types';

/**
 * The SQLite job store: every statement of the default backend, on one file
 * that every process of the machine opens. Synchronous (`node:sqlite`): each
 * call is one short statement or transaction
 * (docs/adr/0012-sqlite-job-store-by-default.md). Claims are `UPDATE …
 * RETURNING` under the write lock, so two processes never take the same job;
 * a claim holds a lease that its process renews, and a job whose lease ran
 * out (its process died) is claimed again.
 *
 * This class is the store's surface, one method per call its users (the
 * queue, the runner, the group commit) make; the work is in `store/`, by
 * concern: the connection's life (`store-connection.ts`), transactions and
 * savepoints (`transactions.ts`), reads (`job-reads.ts`), submissions
 * (`job-submission.ts`), runs from claim to end (`job-runs.ts`), and what
 * leaves the store (`eviction.ts`).
 */
export class SqliteJobStore {
  private readonly store: StoreConnection;

  constructor(private readonly options: SqliteStoreOptions) {
    this.store = new StoreConnection(options);
  }

  /** Which store this connection opened, or why it opened none. */
  get opened(): OpenedStore | { readonly problem: string } {
    return this.store.opened;
  }

  /** Tries again to open the store when none is open; true once it is (`StoreConnection.reopen`). */
  reopen(): boolean {
    return this.store.reopen();
  }

  close(): void {
    this.store.close();
  }

  /** Inserts a queued job, or returns the one its idempotency key already names. */
  insert(
    payload: JobPayload,
    owner: string,
    idempotency: IdempotencyClaim | undefined,
    now = Date.now(),
  ): { job: JobView; created: boolean } {
    return insertJob(this.store, this.options, payload, owner, idempotency, now);
  }

  get(id: string, caller: JobCaller, now = Date.now()): JobView | undefined {
    return reads.getJob(this.store, id, caller, now);
  }

  /** Newest first, from a cursor: an index range, whatever the page's depth. */
  list(
    query: { status?: JobStatus; limit: number; cursor?: string },
    caller: JobCaller,
    now = Date.now(),
  ): JobPage {
    return reads.listJobs(this.store, query, caller, now);
  }

  /** Events after `afterId`, oldest first. */
  events(id: string, afterId: number): JobEvent[] {
    return reads.jobEvents(this.store, id, afterId);
  }

  /** Cancels a queued job; undefined when it was not queued (running, finished, or not there). */
  cancelQueued(id: string, now = Date.now()): EndedJob | undefined {
    return runs.cancelQueued(this.store, this.options, id, now);
  }

  /** Flags a running job: the process running it reads the flag and aborts it. */
  requestCancel(id: string): boolean {
    return runs.requestCancel(this.store, id);
  }

  /** Fails the abandoned jobs with no attempt left (WORKER_CRASHED); returns them for the metrics. */
  failAbandoned(now = Date.now()): EndedJob[] {
    return runs.failAbandoned(this.store, this.options, now);
  }

  /** Whether `failAbandoned` would find a job: a read, no write lock. */
  hasAbandoned(now = Date.now()): boolean {
    return reads.hasAbandoned(this.store, now);
  }

  /**
   * Claims up to `limit` runnable jobs for `leaseOwner`: queued ones whose
   * backoff is over, and running ones whose lease expired (their process
   * died) with attempts left.
   */
  claim(leaseOwner: string, limit: number, leaseMs: number, now = Date.now()): ClaimedJob[] {
    if (limit <= 0 || !this.hasRunnable(now)) return [];
    return this.claimRunnable(leaseOwner, limit, leaseMs, now);
  }

  /** Whether a claim would find a job: a read, so that an idle poll takes no write lock. */
  hasRunnable(now = Date.now()): boolean {
    return reads.hasRunnable(this.store, now);
  }

  /** `claim` without the read first: for a caller that knows (or read elsewhere) that jobs wait. */
  claimRunnable(
    leaseOwner: string,
    limit: number,
    leaseMs: number,
    now = Date.now(),
  ): ClaimedJob[] {
    return runs.claimRunnable(this.store, leaseOwner, limit, leaseMs, now);
  }

  /** Extends the leases of `leaseOwner`'s running jobs. */
  renewLeases(leaseOwner: string, leaseMs: number, now = Date.now()): void {
    runs.renewLeases(this.store, leaseOwner, leaseMs, now);
  }

  /** Ids of `leaseOwner`'s running jobs whose cancellation was asked for. */
  cancelRequested(leaseOwner: string): string[] {
    return reads.cancelRequested(this.store, leaseOwner);
  }

  /** The latest progress of a running job; dropped when the lease is no longer this process's. */
  progress(
    id: string,
    leaseOwner: string,
    fraction: number,
    message: string | undefined,
    now = Date.now(),
  ): void {
    runs.recordProgress(this.store, id, leaseOwner, fraction, message, now);
  }

  /**
   * Records how a run ended, if the job is still this process's (a lease
   * that expired was taken over: the other run's outcome counts). A retry
   * goes back to the queue after its backoff. Returns the job's facts when
   * recorded.
   */
  finish(
    id: string,
    leaseOwner: string,
    ending: RunEnding,
    now = Date.now(),
  ): EndedJob | undefined {
    return runs.finishRun(this.store, this.options, id, leaseOwner, ending, now);
  }

  /** Jobs per status, over every owner. */
  counts(now = Date.now()): Partial<Record<JobStatus, number>> {
    return reads.countJobs(this.store, now);
  }

  /** Deletes up to `batch` expired jobs (and their events); returns how many. */
  purgeExpired(batch: number, now = Date.now()): number {
    return eviction.purgeExpired(this.store, batch, now);
  }

  /** Gives free pages back to the file system (the WAL is truncated on the checkpointer's thread). */
  compact(pages: number): void {
    eviction.compact(this.store, pages);
  }

  /** The stored totals the bounds are checked against. */
  totals(): { jobs: number; bytes: number } {
    return reads.totals(this.store);
  }

  /** Takes the write lock for a group of calls (`group-commit.ts`); false when another holds it. */
  begin(): boolean {
    return transactions.begin(this.store);
  }

  commit(): void {
    transactions.commit(this.store);
  }

  rollback(): void {
    transactions.rollback(this.store);
  }

  /** One write transaction, or inside a group's (`begin`), a savepoint of its own. */
  transaction<T>(work: () => T): T {
    return transactions.transaction(this.store, work);
  }
}
