import { randomUUID } from 'node:crypto';
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { Errors } from '../../common/app-error';
import { ErrorCode } from '../../common/error-codes';
import { decodeCursor, encodeCursor } from '../job-cursor';
import type { IdempotencyClaim, JobCaller } from '../job-queue';
import {
  iso,
  jobLink,
  type JobError,
  type JobEvent,
  type JobPage,
  type JobPayload,
  type JobResult,
  type JobStatus,
  type JobView,
} from '../job.types';
import { traceIdOf } from '../../tracing/job-trace';
import { openStoreFile, type OpenedStore } from './sqlite-store-file';
import { WalCheckpointer } from './wal-checkpointer';

/**
 * How often the WAL is copied back into the database file, off the event
 * loop (and restarted once it holds 32 MiB, `wal-checkpointer.ts`). At 500
 * submissions/s the WAL grows ~45 MB a second: a copy every 250 ms leaves
 * the restart's locked step little to copy (ADR 0026).
 */
const CHECKPOINT_INTERVAL_MS = 250;
/** SQLite's primary result code for a lock held by another connection. */
const SQLITE_BUSY = 5;

export interface SqliteStoreOptions {
  readonly path: string;
  readonly maxStored: number;
  readonly maxStoredBytes: number;
  readonly resultTtlSeconds: number;
  readonly attempts: number;
  readonly backoffMs: number;
  /**
   * How long a statement waits for another process's write lock, holding the
   * event loop. 0 for the group commit's connection (`sqlite-job-writer.ts`),
   * which retries later instead.
   */
  readonly busyTimeoutMs?: number;
  /**
   * Whether a missing file is created (default true): only when the whole
   * service starts. A process the cluster primary forked opens the file the
   * primary made, and never creates one (docs/jobs.md).
   */
  readonly create?: boolean;
  /** The store this connection must be (the writer thread's: the one its process's reads opened). */
  readonly storeId?: string;
}

/** A job one process claimed: what it needs to run it. */
export interface ClaimedJob {
  readonly id: string;
  readonly task: string;
  readonly createdAt: number;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly payload: JobPayload;
}

/** How a run ended, as the runner hands it back. */
export type RunEnding =
  | { readonly status: 'succeeded'; readonly result: JobResult }
  | { readonly status: 'failed' | 'cancelled'; readonly error: JobError }
  | { readonly status: 'retry'; readonly error: JobError };

interface JobRow {
  id: string;
  owner: string;
  task: string;
  status: JobStatus;
  attempts: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  progress: string | null;
  result: string | null;
  error: string | null;
  fingerprint: string | null;
  expires_at: number | null;
  trace_context: string | null;
}

const VIEW_COLUMNS =
  'id, owner, task, status, attempts, created_at, started_at, finished_at, progress, result, error, fingerprint, expires_at, trace_context';
/** Finished jobs dropped at least per submission that needs room: the next ones then find room. */
const EVICT_BATCH = 100;

/**
 * The SQLite job store: every statement of the default backend, on one file
 * that every process of the machine opens. Synchronous (`node:sqlite`): each
 * call is one short statement or transaction, microseconds to a millisecond,
 * measured under 1,000 submissions/s (docs/adr/0012-sqlite-job-store-by-default.md).
 * Claims are `UPDATE … RETURNING` under the write lock, so two processes never
 * take the same job; a claim holds a lease that its process renews, and a job
 * whose lease ran out (its process died) is claimed again.
 */
export class SqliteJobStore {
  /** Undefined when there was no store to open: every call is then QUEUE_UNAVAILABLE. */
  private readonly db: DatabaseSync | undefined;
  /** Which store this connection opened, or why it opened none. */
  readonly opened: OpenedStore | { readonly problem: string };
  /** Compiled once per SQL text: compiling costs about as much as running these statements. */
  private readonly statements = new Map<string, StatementSync>();
  private checkpointer: WalCheckpointer | undefined;

  constructor(private readonly options: SqliteStoreOptions) {
    const create = options.create ?? true;
    let opened: ReturnType<typeof openStoreFile>;
    try {
      opened = openStoreFile(options.path, { create, timeoutMs: options.busyTimeoutMs });
    } catch (error) {
      // The service's start reports it and stops; a forked process serves without a store.
      if (create) throw error;
      this.opened = {
        problem: `no job store at ${options.path} to open (${(error as Error).message})`,
      };
      return;
    }
    const { storeId } = opened.identity;
    if (options.storeId !== undefined && storeId !== options.storeId) {
      opened.db.close();
      this.opened = {
        problem: `the file at ${options.path} is job store ${storeId}, not ${options.storeId}`,
      };
      return;
    }
    const { db, ...store } = opened;
    this.db = db;
    this.opened = store;
  }

  close(): void {
    void this.checkpointer?.stop();
    if (this.db?.isOpen === true) this.db.close();
  }

  /** The connection, or QUEUE_UNAVAILABLE with the reason there is none. */
  private get connection(): DatabaseSync {
    if (this.db !== undefined) return this.db;
    throw Errors.queueUnavailable(
      'problem' in this.opened ? this.opened.problem : 'the job store is not open',
    );
  }

  /** Inserts a queued job, or returns the one its idempotency key already names. */
  insert(
    payload: JobPayload,
    owner: string,
    idempotency: IdempotencyClaim | undefined,
    now = Date.now(),
  ): { job: JobView; created: boolean } {
    const input = JSON.stringify(payload.input);
    const bytes = input.length + (payload.body?.byteLength ?? 0);
    return this.transaction(() => {
      if (idempotency !== undefined) {
        const existing = this.row(
          `SELECT ${VIEW_COLUMNS} FROM jobs WHERE owner = ? AND idempotency_key = ?`,
          owner,
          idempotency.key,
        );
        if (existing !== undefined && !expired(existing, now)) {
          if (existing.fingerprint !== idempotency.fingerprint) {
            throw Errors.idempotencyKeyReused(idempotency.key, existing.id);
          }
          return { job: toView(existing), created: false };
        }
        if (existing !== undefined)
          this.statement('DELETE FROM jobs WHERE id = ?').run(existing.id);
      }
      this.makeRoom(bytes, now);
      const id = randomUUID();
      this.statement(
        `INSERT INTO jobs (id, owner, task, input, body, encrypt, status, max_attempts, created_at,
             run_after, idempotency_key, fingerprint, bytes, last_event, trace_context)
           VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, 1, ?)`,
      ).run(
        id,
        owner,
        payload.task,
        input,
        payload.body ?? null,
        payload.encrypt ? 1 : 0,
        this.options.attempts,
        now,
        now,
        idempotency?.key ?? null,
        idempotency?.fingerprint ?? null,
        bytes,
        payload.trace ?? null,
      );
      this.addEvent(id, 1, { type: 'status', status: 'queued', at: iso(now) as string });
      const job = this.row(`SELECT ${VIEW_COLUMNS} FROM jobs WHERE id = ?`, id) as JobRow;
      return { job: toView(job), created: true };
    });
  }

  get(id: string, caller: JobCaller, now = Date.now()): JobView | undefined {
    const row = this.row(`SELECT ${VIEW_COLUMNS} FROM jobs WHERE id = ?`, id);
    if (row === undefined || expired(row, now)) return undefined;
    if (!caller.admin && row.owner !== caller.id) return undefined;
    return toView(row);
  }

  /** Newest first, from a cursor: an index range, whatever the page's depth. */
  list(
    query: { status?: JobStatus; limit: number; cursor?: string },
    caller: JobCaller,
    now = Date.now(),
  ): JobPage {
    const where: string[] = ['(expires_at IS NULL OR expires_at > ?)'];
    const params: SQLInputValue[] = [now];
    if (!caller.admin) {
      where.push('owner = ?');
      params.push(caller.id);
    }
    if (query.status !== undefined) {
      where.push('status = ?');
      params.push(query.status);
    }
    if (query.cursor !== undefined) {
      const { createdAt, id } = decodeCursor(query.cursor);
      where.push('(created_at, id) < (?, ?)');
      params.push(createdAt, id);
    }
    const rows = this.rows(
      `SELECT ${VIEW_COLUMNS} FROM jobs WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, id DESC LIMIT ?`,
      ...params,
      query.limit + 1,
    );
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      items: page.map(toView),
      ...(rows.length > query.limit && last !== undefined
        ? { nextCursor: encodeCursor({ createdAt: last.created_at, id: last.id }) }
        : {}),
    };
  }

  /** Events after `afterId`, oldest first. */
  events(id: string, afterId: number): JobEvent[] {
    return this.statement(
      'SELECT seq, data FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq',
    )
      .all(id, afterId)
      .map((row) => ({
        id: row.seq as number,
        ...(JSON.parse(row.data as string) as Omit<JobEvent, 'id'>),
      }));
  }

  /** Cancels a queued job; undefined when it was not queued (running, finished, or not there). */
  cancelQueued(id: string, now = Date.now()): { task: string; createdAt: number } | undefined {
    return this.transaction(() => {
      const ended = this.end(
        id,
        'queued',
        undefined,
        { status: 'cancelled', error: cancelled() },
        now,
      );
      return ended;
    });
  }

  /** Flags a running job: the process running it reads the flag and aborts it. */
  requestCancel(id: string): boolean {
    const { changes } = this.statement(
      "UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND status = 'running'",
    ).run(id);
    return changes > 0;
  }

  /**
   * Fails the jobs whose lease expired (their process died) with no attempt
   * left, as WORKER_CRASHED; returns them for the metrics. A read first, so
   * that the usual case (none) takes no write lock.
   */
  failAbandoned(now = Date.now()): Array<{ task: string; createdAt: number }> {
    if (!this.hasAbandoned(now)) return [];
    return this.transaction(() =>
      this.statement(
        `SELECT id FROM jobs WHERE status = 'running' AND lease_until < ? AND attempts >= max_attempts`,
      )
        .all(now)
        .map((row) =>
          this.end(
            row.id as string,
            'running',
            undefined,
            { status: 'failed', error: crash() },
            now,
          ),
        )
        .filter((ended) => ended !== undefined),
    );
  }

  /** Whether `failAbandoned` would find a job: a read, no write lock. */
  hasAbandoned(now = Date.now()): boolean {
    const abandoned = this.statement(
      `SELECT count(*) AS n FROM jobs WHERE status = 'running' AND lease_until < ? AND attempts >= max_attempts`,
    ).get(now);
    return abandoned?.n !== 0;
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
    const runnable = this.statement(
      `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'queued' AND run_after <= ?)
           OR EXISTS (SELECT 1 FROM jobs WHERE status = 'running' AND lease_until < ?
                        AND attempts < max_attempts) AS found`,
    ).get(now, now);
    return runnable?.found !== 0;
  }

  /** `claim` without the read first: for a caller that knows (or read elsewhere) that jobs wait. */
  claimRunnable(
    leaseOwner: string,
    limit: number,
    leaseMs: number,
    now = Date.now(),
  ): ClaimedJob[] {
    if (!(limit >= 1)) return [];
    // The limit is written into the SQL, one statement per value: bound as a parameter (`LIMIT ?`),
    // it made SQLite prepare the statement again on every claim, 3.5 x its cost (ADR 0030).
    const most = Math.floor(limit);
    return this.transaction(() => {
      const rows = this.statement(
        `UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = ?,
             lease_owner = ?, lease_until = ?, cancel_requested = 0, last_event = last_event + 1
           WHERE id IN (
             SELECT id FROM (
               SELECT * FROM (
                 SELECT id, run_after AS due FROM jobs WHERE status = 'queued' AND run_after <= ?
                   ORDER BY run_after LIMIT ${most})
               UNION ALL
               SELECT * FROM (
                 SELECT id, lease_until AS due FROM jobs
                   WHERE status = 'running' AND lease_until < ? AND attempts < max_attempts
                   ORDER BY lease_until LIMIT ${most})
             ) ORDER BY due LIMIT ${most})
           RETURNING id, task, input, body, encrypt, attempts, max_attempts, created_at, last_event,
             trace_context`,
      ).all(now, leaseOwner, now + leaseMs, now, now);
      const claimed = rows.map((row) => {
        this.addEvent(row.id as string, row.last_event as number, {
          type: 'status',
          status: 'running',
          attempt: row.attempts as number,
          at: iso(now) as string,
        });
        const body = row.body as Uint8Array | null;
        const trace = row.trace_context as string | null;
        return {
          id: row.id as string,
          task: row.task as string,
          createdAt: row.created_at as number,
          attempts: row.attempts as number,
          maxAttempts: row.max_attempts as number,
          payload: {
            task: row.task as string,
            input: JSON.parse(row.input as string) as object,
            encrypt: row.encrypt === 1,
            ...(body === null ? {} : { body }),
            ...(trace === null ? {} : { trace }),
          },
        };
      });
      return claimed;
    });
  }

  /** Extends the leases of `leaseOwner`'s running jobs. */
  renewLeases(leaseOwner: string, leaseMs: number, now = Date.now()): void {
    this.statement(
      "UPDATE jobs SET lease_until = ? WHERE lease_owner = ? AND status = 'running'",
    ).run(now + leaseMs, leaseOwner);
  }

  /** Ids of `leaseOwner`'s running jobs whose cancellation was asked for. */
  cancelRequested(leaseOwner: string): string[] {
    return this.statement(
      "SELECT id FROM jobs WHERE lease_owner = ? AND status = 'running' AND cancel_requested = 1",
    )
      .all(leaseOwner)
      .map((row) => row.id as string);
  }

  /** The latest progress of a running job; dropped when the lease is no longer this process's. */
  progress(
    id: string,
    leaseOwner: string,
    fraction: number,
    message: string | undefined,
    now = Date.now(),
  ): void {
    this.transaction(() => {
      const at = iso(now) as string;
      const progress = JSON.stringify({
        fraction,
        ...(message === undefined ? {} : { message }),
        at,
      });
      const row = this.statement(
        `UPDATE jobs SET progress = ?, last_event = last_event + 1
           WHERE id = ? AND lease_owner = ? AND status = 'running' RETURNING last_event`,
      ).get(progress, id, leaseOwner);
      if (row === undefined) return;
      const seq = row.last_event as number;
      // Only the latest progress between two status changes is kept: the log stays short.
      this.statement(
        'DELETE FROM job_events WHERE job_id = ? AND seq = ? AND data LIKE \'{"type":"progress"%\'',
      ).run(id, seq - 1);
      this.addEvent(id, seq, {
        type: 'progress',
        fraction,
        ...(message === undefined ? {} : { message }),
        at,
      });
    });
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
  ): { task: string; createdAt: number } | undefined {
    return this.transaction(() => this.end(id, 'running', leaseOwner, ending, now));
  }

  /** Jobs per status, over every owner. */
  counts(now = Date.now()): Partial<Record<JobStatus, number>> {
    const counts: Partial<Record<JobStatus, number>> = {
      queued: 0,
      running: 0,
      succeeded: 0,
      failed: 0,
      cancelled: 0,
    };
    const rows = this.statement(
      'SELECT status, count(*) AS n FROM jobs WHERE expires_at IS NULL OR expires_at > ? GROUP BY status',
    ).all(now);
    for (const row of rows) counts[row.status as JobStatus] = row.n as number;
    return counts;
  }

  /** Deletes up to `batch` expired jobs (and their events); returns how many. */
  purgeExpired(batch: number, now = Date.now()): number {
    const { changes } = this.statement(
      `DELETE FROM jobs WHERE id IN (
           SELECT id FROM jobs WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?)`,
    ).run(now, batch);
    return Number(changes);
  }

  /** Gives free pages back to the file system (the WAL is truncated on the checkpointer's thread). */
  compact(pages: number): void {
    this.connection.exec(`PRAGMA incremental_vacuum(${Math.floor(pages)})`);
  }

  /** The stored totals the bounds are checked against. */
  totals(): { jobs: number; bytes: number } {
    const row = this.statement('SELECT jobs, bytes FROM job_totals WHERE id = 1').get();
    return { jobs: row?.jobs as number, bytes: row?.bytes as number };
  }

  private end(
    id: string,
    from: 'queued' | 'running',
    leaseOwner: string | undefined,
    ending: RunEnding,
    now: number,
  ): { task: string; createdAt: number } | undefined {
    const at = iso(now) as string;
    const lease = leaseOwner === undefined ? '' : 'AND lease_owner = ?';
    const leaseParams = leaseOwner === undefined ? [] : [leaseOwner];
    if (ending.status === 'retry') {
      const row = this.statement(
        `UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL, error = ?,
             run_after = ? + ? * (1 << max(0, min(attempts - 1, 20))), last_event = last_event + 1
           WHERE id = ? AND status = ? ${lease}
           RETURNING task, created_at, attempts, last_event`,
      ).get(JSON.stringify(ending.error), now, this.options.backoffMs, id, from, ...leaseParams);
      if (row === undefined) return undefined;
      this.addEvent(id, row.last_event as number, {
        type: 'status',
        status: 'queued',
        attempt: row.attempts as number,
        message: ending.error.code,
        at,
      });
      return { task: row.task as string, createdAt: row.created_at as number };
    }
    const result = ending.status === 'succeeded' ? JSON.stringify(ending.result) : null;
    const error = ending.status === 'succeeded' ? null : JSON.stringify(ending.error);
    const row = this.statement(
      `UPDATE jobs SET status = ?, result = ?, error = ?, finished_at = ?, expires_at = ?,
           lease_owner = NULL, lease_until = NULL, body = NULL, cancel_requested = 0,
           bytes = length(input) + ?, last_event = last_event + 1
         WHERE id = ? AND status = ? ${lease}
         RETURNING task, created_at, attempts, last_event`,
    ).get(
      ending.status,
      result,
      error,
      now,
      now + this.options.resultTtlSeconds * 1000,
      (result?.length ?? 0) + (error?.length ?? 0),
      id,
      from,
      ...leaseParams,
    );
    if (row === undefined) return undefined;
    this.addEvent(id, row.last_event as number, {
      type: 'status',
      status: ending.status,
      attempt: row.attempts as number,
      at,
    });
    return { task: row.task as string, createdAt: row.created_at as number };
  }

  /**
   * Keeps the store within its bounds: expired jobs go first, then the
   * oldest finished ones; when queued and running jobs alone fill it, the
   * submission is refused (JOB_QUEUE_FULL).
   */
  private makeRoom(bytes: number, now: number): void {
    const { maxStored, maxStoredBytes } = this.options;
    const fits = () => {
      const totals = this.totals();
      return totals.jobs < maxStored && totals.bytes + bytes <= maxStoredBytes;
    };
    if (fits()) return;
    this.purgeExpired(EVICT_BATCH, now);
    if (fits()) return;
    // 1 % of the bound at once, so that a full store does this once per many submissions.
    this.statement(
      `DELETE FROM jobs WHERE id IN (
           SELECT id FROM jobs WHERE finished_at IS NOT NULL ORDER BY finished_at LIMIT ?)`,
    ).run(Math.max(EVICT_BATCH, Math.ceil(maxStored / 100)));
    if (fits()) return;
    if (bytes > maxStoredBytes) throw Errors.payloadTooLarge(maxStoredBytes);
    throw Errors.jobQueueFull(maxStored);
  }

  private statement(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.connection.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * A statement without parameters (the transaction's own), prepared once: `exec` parsed each
   * of them again, four or more per write, ~20 % of the writer thread's time (ADR 0030).
   */
  private execute(sql: string): void {
    this.statement(sql).run();
  }

  private addEvent(id: string, seq: number, event: Omit<JobEvent, 'id'>): void {
    this.statement('INSERT INTO job_events (job_id, seq, data) VALUES (?, ?, ?)').run(
      id,
      seq,
      JSON.stringify(event),
    );
  }

  private row(sql: string, ...params: SQLInputValue[]): JobRow | undefined {
    return this.statement(sql).get(...params) as JobRow | undefined;
  }

  private rows(sql: string, ...params: SQLInputValue[]): JobRow[] {
    return this.statement(sql).all(...params) as unknown as JobRow[];
  }

  /**
   * Takes the write lock for a group of calls (`sqlite-job-writer.ts`): false,
   * at once, when another connection holds it and this one waits for nothing
   * (`busyTimeoutMs: 0`). Each call inside is then a savepoint of its own.
   */
  begin(): boolean {
    this.startCheckpoints();
    try {
      this.execute('BEGIN IMMEDIATE');
      return true;
    } catch (error) {
      if ((error as { errcode?: number }).errcode === SQLITE_BUSY) return false;
      throw error;
    }
  }

  /** Started by the first write: a process that never writes (no jobs) costs no thread. */
  private startCheckpoints(): void {
    if (this.db === undefined) return;
    this.checkpointer ??= new WalCheckpointer(this.options.path, CHECKPOINT_INTERVAL_MS);
  }

  commit(): void {
    this.execute('COMMIT');
  }

  rollback(): void {
    if (this.db?.isTransaction === true) this.execute('ROLLBACK');
  }

  /**
   * One write transaction, taken at once (`IMMEDIATE`): no upgrade from a read
   * lock to deadlock on. Inside a group's transaction (`begin`), a savepoint:
   * a call that fails undoes only its own writes.
   */
  transaction<T>(work: () => T): T {
    if (this.connection.isTransaction) {
      this.execute('SAVEPOINT call');
      try {
        const result = work();
        this.execute('RELEASE call');
        return result;
      } catch (error) {
        this.execute('ROLLBACK TO call');
        this.execute('RELEASE call');
        throw error;
      }
    }
    this.startCheckpoints();
    this.execute('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.execute('COMMIT');
      return result;
    } catch (error) {
      this.execute('ROLLBACK');
      throw error;
    }
  }
}

const expired = (row: JobRow, now: number) => row.expires_at !== null && row.expires_at <= now;
const cancelled = (): JobError => ({
  code: ErrorCode.TASK_CANCELLED,
  detail: 'The job was cancelled',
});
const crash = (): JobError => ({
  code: ErrorCode.WORKER_CRASHED,
  detail: 'The process running the job stopped (its lease expired) and no attempts are left',
});

function toView(row: JobRow): JobView {
  return {
    id: row.id,
    task: row.task,
    owner: row.owner,
    status: row.status,
    attempts: row.attempts,
    createdAt: iso(row.created_at) as string,
    startedAt: iso(row.started_at ?? undefined),
    finishedAt: iso(row.finished_at ?? undefined),
    ...(row.progress === null ? {} : { progress: JSON.parse(row.progress) as JobView['progress'] }),
    ...(row.result === null ? {} : { result: JSON.parse(row.result) as JobResult }),
    ...(row.error === null || row.status === 'queued' || row.status === 'running'
      ? {}
      : { error: JSON.parse(row.error) as JobError }),
    ...(row.trace_context === null ? {} : { traceId: traceIdOf(row.trace_context) }),
    links: { self: jobLink(row.id) },
  };
}
