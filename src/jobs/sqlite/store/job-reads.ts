import type { SQLInputValue } from 'node:sqlite';
import { decodeCursor, encodeCursor } from '../../job-cursor';
import type { JobCaller } from '../../job-queue';
import type { JobEvent, JobPage, JobStatus, JobView } from '../../job.types';
import { expired, jobRow, jobRows, toView, VIEW_COLUMNS } from './job-rows';
import type { StoreConnection } from './store-connection';

/**
 * The store's reads: one statement each, no write lock (WAL: a reader never
 * waits for the writer). Those the runner polls with (`hasRunnable`,
 * `hasAbandoned`) let an idle poll take no write lock at all.
 */

export function getJob(
  store: StoreConnection,
  id: string,
  caller: JobCaller,
  now: number,
): JobView | undefined {
  const row = jobRow(store, `SELECT ${VIEW_COLUMNS} FROM jobs WHERE id = ?`, id);
  if (row === undefined || expired(row, now)) return undefined;
  if (!caller.admin && row.owner !== caller.id) return undefined;
  return toView(row);
}

/** Newest first, from a cursor: an index range, whatever the page's depth. */
export function listJobs(
  store: StoreConnection,
  query: { status?: JobStatus; limit: number; cursor?: string },
  caller: JobCaller,
  now: number,
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
  const rows = jobRows(
    store,
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
export function jobEvents(store: StoreConnection, id: string, afterId: number): JobEvent[] {
  return store
    .statement('SELECT seq, data FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq')
    .all(id, afterId)
    .map((row) => ({
      id: row.seq as number,
      ...(JSON.parse(row.data as string) as Omit<JobEvent, 'id'>),
    }));
}

/** Jobs per status, over every owner. */
export function countJobs(store: StoreConnection, now: number): Partial<Record<JobStatus, number>> {
  const counts: Partial<Record<JobStatus, number>> = {
    queued: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
    cancelled: 0,
  };
  const rows = store
    .statement(
      'SELECT status, count(*) AS n FROM jobs WHERE expires_at IS NULL OR expires_at > ? GROUP BY status',
    )
    .all(now);
  for (const row of rows) counts[row.status as JobStatus] = row.n as number;
  return counts;
}

/** The stored totals the bounds are checked against. */
export function totals(store: StoreConnection): { jobs: number; bytes: number } {
  const row = store.statement('SELECT jobs, bytes FROM job_totals WHERE id = 1').get();
  return { jobs: row?.jobs as number, bytes: row?.bytes as number };
}

/** Whether `failAbandoned` would find a job. */
export function hasAbandoned(store: StoreConnection, now: number): boolean {
  const abandoned = store
    .statement(
      `SELECT count(*) AS n FROM jobs WHERE status = 'running' AND lease_until < ? AND attempts >= max_attempts`,
    )
    .get(now);
  return abandoned?.n !== 0;
}

/** Whether a claim would find a job. */
export function hasRunnable(store: StoreConnection, now: number): boolean {
  const runnable = store
    .statement(
      `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'queued' AND run_after <= ?)
           OR EXISTS (SELECT 1 FROM jobs WHERE status = 'running' AND lease_until < ?
                        AND attempts < max_attempts) AS found`,
    )
    .get(now, now);
  return runnable?.found !== 0;
}

/** Ids of `leaseOwner`'s running jobs whose cancellation was asked for. */
export function cancelRequested(store: StoreConnection, leaseOwner: string): string[] {
  return store
    .statement(
      "SELECT id FROM jobs WHERE lease_owner = ? AND status = 'running' AND cancel_requested = 1",
    )
    .all(leaseOwner)
    .map((row) => row.id as string);
}
