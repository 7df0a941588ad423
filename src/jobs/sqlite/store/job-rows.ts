import type { SQLInputValue } from 'node:sqlite';
import {
  iso,
  jobLink,
  type JobError,
  type JobEvent,
  type JobResult,
  type JobStatus,
  type JobView,
} from '../../job.types';
import { traceIdOf } from '../../../tracing/job-trace';
import type { StoreConnection } from './store-connection';

/** A job's row as the views read it (`VIEW_COLUMNS`). */
export interface JobRow {
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

export const VIEW_COLUMNS =
  'id, owner, task, status, attempts, created_at, started_at, finished_at, progress, result, error, fingerprint, expires_at, trace_context';

export function jobRow(
  store: StoreConnection,
  sql: string,
  ...params: SQLInputValue[]
): JobRow | undefined {
  return store.statement(sql).get(...params) as JobRow | undefined;
}

export function jobRows(store: StoreConnection, sql: string, ...params: SQLInputValue[]): JobRow[] {
  return store.statement(sql).all(...params) as unknown as JobRow[];
}

/** Past its retention: kept in the file until the purge, shown to nobody. */
export const expired = (row: JobRow, now: number) =>
  row.expires_at !== null && row.expires_at <= now;

/** Appends an event to a job's log; `seq` is the job's `last_event` after the write that caused it. */
export function addEvent(
  store: StoreConnection,
  id: string,
  seq: number,
  event: Omit<JobEvent, 'id'>,
): void {
  store
    .statement('INSERT INTO job_events (job_id, seq, data) VALUES (?, ?, ?)')
    .run(id, seq, JSON.stringify(event));
}

export function toView(row: JobRow): JobView {
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
