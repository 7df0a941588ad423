import { randomUUID } from 'node:crypto';
import { Errors } from '../../../common/app-error';
import type { IdempotencyClaim } from '../../job-queue';
import { iso, type JobPayload, type JobView } from '../../job.types';
import { makeRoom } from './eviction';
import { addEvent, expired, jobRow, toView, VIEW_COLUMNS, type JobRow } from './job-rows';
import type { StoreConnection } from './store-connection';
import type { SqliteStoreOptions } from './store-types';
import { transaction } from './transactions';

type SubmissionOptions = Pick<SqliteStoreOptions, 'attempts' | 'maxStored' | 'maxStoredBytes'>;

/** Inserts a queued job, or returns the one its idempotency key already names. */
export function insertJob(
  store: StoreConnection,
  options: SubmissionOptions,
  payload: JobPayload,
  owner: string,
  idempotency: IdempotencyClaim | undefined,
  now: number,
): { job: JobView; created: boolean } {
  const input = JSON.stringify(payload.input);
  // As stored: the input and the trace context as UTF-8 text, the body as a blob.
  const bytes =
    Buffer.byteLength(input) +
    (payload.body?.byteLength ?? 0) +
    (payload.trace === undefined ? 0 : Buffer.byteLength(payload.trace));
  return transaction(store, () => {
    const existing =
      idempotency === undefined ? undefined : jobOfKey(store, owner, idempotency, now);
    if (existing !== undefined) return { job: existing, created: false };
    makeRoom(store, options, bytes, now);
    const id = randomUUID();
    store
      .statement(
        `INSERT INTO jobs (id, owner, task, input, body, encrypt, status, max_attempts, created_at,
             run_after, idempotency_key, fingerprint, bytes, last_event, trace_context)
           VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, 1, ?)`,
      )
      .run(
        id,
        owner,
        payload.task,
        input,
        payload.body ?? null,
        payload.encrypt ? 1 : 0,
        options.attempts,
        now,
        now,
        idempotency?.key ?? null,
        idempotency?.fingerprint ?? null,
        bytes,
        payload.trace ?? null,
      );
    addEvent(store, id, 1, { type: 'status', status: 'queued', at: iso(now) as string });
    const job = jobRow(store, `SELECT ${VIEW_COLUMNS} FROM jobs WHERE id = ?`, id) as JobRow;
    return { job: toView(job), created: true };
  });
}

/**
 * The live job `owner`'s idempotency key already names, if any: the same
 * request's (the key reused with another one is IDEMPOTENCY_KEY_REUSED). An
 * expired one is deleted, and the key is free again.
 */
function jobOfKey(
  store: StoreConnection,
  owner: string,
  idempotency: IdempotencyClaim,
  now: number,
): JobView | undefined {
  const existing = jobRow(
    store,
    `SELECT ${VIEW_COLUMNS} FROM jobs WHERE owner = ? AND idempotency_key = ?`,
    owner,
    idempotency.key,
  );
  if (existing === undefined) return undefined;
  if (expired(existing, now)) {
    store.statement('DELETE FROM jobs WHERE id = ?').run(existing.id);
    return undefined;
  }
  if (existing.fingerprint !== idempotency.fingerprint) {
    throw Errors.idempotencyKeyReused(idempotency.key, existing.id);
  }
  return toView(existing);
}
