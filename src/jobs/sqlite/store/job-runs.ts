import { ErrorCode } from '../../../common/error-codes';
import { iso, type JobError } from '../../job.types';
import { hasAbandoned } from './job-reads';
import { addEvent } from './job-rows';
import type { StoreConnection } from './store-connection';
import type { ClaimedJob, EndedJob, RunEnding, SqliteStoreOptions } from './store-types';
import { transaction } from './transactions';

/**
 * A job's runs, from its claim to its end: claims are `UPDATE … RETURNING`
 * under the write lock, so two processes never take the same job; a claim
 * holds a lease that its process renews, and a job whose lease ran out (its
 * process died) is claimed again, or failed once no attempt is left.
 */

type EndOptions = Pick<SqliteStoreOptions, 'backoffMs' | 'resultTtlSeconds'>;

/**
 * Claims up to `limit` runnable jobs for `leaseOwner`: queued ones whose
 * backoff is over, and running ones whose lease expired with attempts left.
 */
export function claimRunnable(
  store: StoreConnection,
  leaseOwner: string,
  limit: number,
  leaseMs: number,
  now: number,
): ClaimedJob[] {
  if (!(limit >= 1)) return [];
  // The limit is written into the SQL, one statement per value: bound as a parameter (`LIMIT ?`),
  // it made SQLite prepare the statement again on every claim (ADR 0030).
  const most = Math.floor(limit);
  return transaction(store, () => {
    const rows = store
      .statement(
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
      )
      .all(now, leaseOwner, now + leaseMs, now, now);
    return rows.map((row) => {
      addEvent(store, row.id as string, row.last_event as number, {
        type: 'status',
        status: 'running',
        attempt: row.attempts as number,
        at: iso(now) as string,
      });
      return toClaimed(row);
    });
  });
}

function toClaimed(row: Record<string, unknown>): ClaimedJob {
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
}

/** Extends the leases of `leaseOwner`'s running jobs. */
export function renewLeases(
  store: StoreConnection,
  leaseOwner: string,
  leaseMs: number,
  now: number,
): void {
  store
    .statement("UPDATE jobs SET lease_until = ? WHERE lease_owner = ? AND status = 'running'")
    .run(now + leaseMs, leaseOwner);
}

/** The latest progress of a running job; dropped when the lease is no longer this process's. */
export function recordProgress(
  store: StoreConnection,
  id: string,
  leaseOwner: string,
  fraction: number,
  message: string | undefined,
  now: number,
): void {
  transaction(store, () => {
    const at = iso(now) as string;
    const progress = JSON.stringify({
      fraction,
      ...(message === undefined ? {} : { message }),
      at,
    });
    const row = store
      .statement(
        `UPDATE jobs SET progress = ?, last_event = last_event + 1
           WHERE id = ? AND lease_owner = ? AND status = 'running' RETURNING last_event`,
      )
      .get(progress, id, leaseOwner);
    if (row === undefined) return;
    const seq = row.last_event as number;
    // Only the latest progress between two status changes is kept: the log stays short.
    store
      .statement(
        'DELETE FROM job_events WHERE job_id = ? AND seq = ? AND data LIKE \'{"type":"progress"%\'',
      )
      .run(id, seq - 1);
    addEvent(store, id, seq, {
      type: 'progress',
      fraction,
      ...(message === undefined ? {} : { message }),
      at,
    });
  });
}

/**
 * Records how a run ended, if the job is still `leaseOwner`'s (a lease that
 * expired was taken over: the other run's outcome counts).
 */
export function finishRun(
  store: StoreConnection,
  options: EndOptions,
  id: string,
  leaseOwner: string,
  ending: RunEnding,
  now: number,
): EndedJob | undefined {
  return transaction(store, () =>
    end(store, options, { id, from: 'running', leaseOwner }, ending, now),
  );
}

/** Cancels a queued job; undefined when it was not queued (running, finished, or not there). */
export function cancelQueued(
  store: StoreConnection,
  options: EndOptions,
  id: string,
  now: number,
): EndedJob | undefined {
  return transaction(store, () =>
    end(store, options, { id, from: 'queued' }, { status: 'cancelled', error: cancelled() }, now),
  );
}

/** Flags a running job: the process running it reads the flag and aborts it. */
export function requestCancel(store: StoreConnection, id: string): boolean {
  const { changes } = store
    .statement("UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND status = 'running'")
    .run(id);
  return changes > 0;
}

/**
 * Fails the jobs whose lease expired (their process died) with no attempt
 * left, as WORKER_CRASHED; returns them for the metrics. A read first, so
 * that the usual case (none) takes no write lock.
 */
export function failAbandoned(
  store: StoreConnection,
  options: EndOptions,
  now: number,
): EndedJob[] {
  if (!hasAbandoned(store, now)) return [];
  return transaction(store, () =>
    store
      .statement(
        `SELECT id FROM jobs WHERE status = 'running' AND lease_until < ? AND attempts >= max_attempts`,
      )
      .all(now)
      .map((row) =>
        end(
          store,
          options,
          { id: row.id as string, from: 'running' },
          { status: 'failed', error: crash() },
          now,
        ),
      )
      .filter((ended) => ended !== undefined),
  );
}

/** Which job an end applies to: in state `from`, and when given, still under `leaseOwner`'s lease. */
interface EndTarget {
  readonly id: string;
  readonly from: 'queued' | 'running';
  readonly leaseOwner?: string;
}

/** A retry goes back to the queue after its backoff; any other ending is final. */
function end(
  store: StoreConnection,
  options: EndOptions,
  target: EndTarget,
  ending: RunEnding,
  now: number,
): EndedJob | undefined {
  return ending.status === 'retry'
    ? requeue(store, options.backoffMs, target, ending.error, now)
    : recordFinal(store, options.resultTtlSeconds, target, ending, now);
}

function requeue(
  store: StoreConnection,
  backoffMs: number,
  target: EndTarget,
  error: JobError,
  now: number,
): EndedJob | undefined {
  const [lease, leaseParams] = leaseCondition(target);
  const row = store
    .statement(
      `UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL, error = ?,
             run_after = ? + ? * (1 << max(0, min(attempts - 1, 20))), last_event = last_event + 1
           WHERE id = ? AND status = ? ${lease}
           RETURNING task, created_at, attempts, last_event`,
    )
    .get(JSON.stringify(error), now, backoffMs, target.id, target.from, ...leaseParams);
  if (row === undefined) return undefined;
  addEvent(store, target.id, row.last_event as number, {
    type: 'status',
    status: 'queued',
    attempt: row.attempts as number,
    message: error.code,
    at: iso(now) as string,
  });
  return { task: row.task as string, createdAt: row.created_at as number };
}

function recordFinal(
  store: StoreConnection,
  resultTtlSeconds: number,
  target: EndTarget,
  ending: Exclude<RunEnding, { status: 'retry' }>,
  now: number,
): EndedJob | undefined {
  const [lease, leaseParams] = leaseCondition(target);
  const result = ending.status === 'succeeded' ? JSON.stringify(ending.result) : null;
  const error = ending.status === 'succeeded' ? null : JSON.stringify(ending.error);
  const row = store
    .statement(
      `UPDATE jobs SET status = ?, result = ?, error = ?, finished_at = ?, expires_at = ?,
           lease_owner = NULL, lease_until = NULL, body = NULL, cancel_requested = 0,
           bytes = length(CAST(input AS BLOB)) + coalesce(length(CAST(trace_context AS BLOB)), 0) + ?,
           last_event = last_event + 1
         WHERE id = ? AND status = ? ${lease}
         RETURNING task, created_at, attempts, last_event`,
    )
    .get(
      ending.status,
      result,
      error,
      now,
      now + resultTtlSeconds * 1000,
      Buffer.byteLength(result ?? '') + Buffer.byteLength(error ?? ''),
      target.id,
      target.from,
      ...leaseParams,
    );
  if (row === undefined) return undefined;
  addEvent(store, target.id, row.last_event as number, {
    type: 'status',
    status: ending.status,
    attempt: row.attempts as number,
    at: iso(now) as string,
  });
  return { task: row.task as string, createdAt: row.created_at as number };
}

function leaseCondition({ leaseOwner }: EndTarget): [sql: string, params: string[]] {
  return leaseOwner === undefined ? ['', []] : ['AND lease_owner = ?', [leaseOwner]];
}

const cancelled = (): JobError => ({
  code: ErrorCode.TASK_CANCELLED,
  detail: 'The job was cancelled',
});
const crash = (): JobError => ({
  code: ErrorCode.WORKER_CRASHED,
  detail: 'The process running the job stopped (its lease expired) and no attempts are left',
});
