/**
 * The least a durable submission can cost (issue 19's submit tail): bare
 * Fastify on a 2-process cluster, whose `POST /api/jobs` answers 202 only
 * once a row is committed to one SQLite file (WAL, `synchronous = NORMAL`)
 * shared by both processes, as the service's default backend does. No Nest,
 * no validation, no job run, no index but the key. `bench/jobs-tail.ts`
 * runs it beside the service (`main=bench/baselines/sqlite-submit.ts`).
 *
 * `SUBMIT_MODE`:
 * - `none`: 202 without a write (the floor of parsing and answering a POST);
 * - `loop`: each insert committed on the event loop (SQLite's busy handler
 *   when the other process holds the lock);
 * - `thread`: inserts posted to a writer thread that commits each turn's
 *   calls in one transaction (the service's design, ADR 0022).
 * `SUBMIT_SCHEMA=service`: the service's tables and indexes, its insert and
 * the job's first event, instead of one table with a key.
 * The WAL is never checkpointed: a run is short, and a checkpoint would only add cost.
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import Fastify from 'fastify';
import { prepareDatabase } from '../../src/jobs/sqlite/sqlite-schema';

const PATH = process.env.JOBS_SQLITE_PATH ?? join(tmpdir(), 'corepool-submit-floor.sqlite');
const MODE = process.env.SUBMIT_MODE ?? 'thread';
const PROCESSES = Number(process.env.CLUSTER_WORKERS ?? 2);
const SERVICE_SCHEMA = process.env.SUBMIT_SCHEMA === 'service';
const LOCK_POLL_MS = 0.2;

interface Insert {
  readonly seq: number;
  readonly id: string;
  readonly body: string;
}

function open(timeoutMs: number): DatabaseSync {
  const db = new DatabaseSync(PATH, { timeout: timeoutMs });
  if (SERVICE_SCHEMA) {
    prepareDatabase(db, randomUUID());
    return db;
  }
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA wal_autocheckpoint = 0');
  db.exec(
    'CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL)',
  );
  return db;
}

/** Inserts one submitted job (`body`: its JSON) with `db`'s statements; call inside a transaction. */
function inserter(db: DatabaseSync): (id: string, body: string, now: number) => void {
  if (!SERVICE_SCHEMA) {
    const insert = db.prepare('INSERT INTO jobs (id, body, created_at) VALUES (?, ?, ?)');
    return (id, body, now) => void insert.run(id, body, now);
  }
  const insert = db.prepare(
    `INSERT INTO jobs (id, owner, task, input, body, encrypt, status, max_attempts, created_at,
         run_after, idempotency_key, fingerprint, bytes, last_event)
       VALUES (?, 'anonymous', 'thread-id', ?, NULL, 0, 'queued', 3, ?, ?, NULL, NULL, ?, 1)`,
  );
  const event = db.prepare('INSERT INTO job_events (job_id, seq, data) VALUES (?, 1, ?)');
  return (id, body, now) => {
    insert.run(id, body, now, now, body.length);
    event.run(id, JSON.stringify({ type: 'status', status: 'queued', at: new Date(now) }));
  };
}

/** The writer thread: every message of one turn in one transaction, each answered after the commit. */
function writerThread(): void {
  const db = open(0);
  const insert = inserter(db);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  let group: Insert[] = [];
  const flush = () => {
    for (;;) {
      try {
        db.exec('BEGIN IMMEDIATE');
        break;
      } catch {
        Atomics.wait(sleeper, 0, 0, LOCK_POLL_MS);
      }
    }
    const done = group;
    group = [];
    const now = Date.now();
    for (const call of done) insert(call.id, call.body, now);
    db.exec('COMMIT');
    parentPort?.postMessage(done.map((call) => call.seq));
  };
  parentPort?.on('message', (call: Insert) => {
    if (group.push(call) === 1) setImmediate(flush);
  });
}

function httpProcess(): void {
  const app = Fastify({ logger: false });
  app.get('/health/live', () => ({ status: 'ok' }));
  app.get('/metrics', () => '');
  const accepted = (id: string) => ({ id, status: 'queued' });

  if (MODE === 'none') {
    app.post('/api/jobs', (_request, reply) => reply.code(202).send(accepted(randomUUID())));
  } else if (MODE === 'loop') {
    const db = open(5000);
    const insert = inserter(db);
    app.post('/api/jobs', (request, reply) => {
      const id = randomUUID();
      db.exec('BEGIN IMMEDIATE');
      insert(id, JSON.stringify(request.body), Date.now());
      db.exec('COMMIT');
      return reply.code(202).send(accepted(id));
    });
  } else {
    const writer = new Worker(__filename, { workerData: 'writer' });
    const waiting = new Map<number, () => void>();
    let nextSeq = 0;
    writer.on('message', (seqs: number[]) => {
      for (const seq of seqs) {
        waiting.get(seq)?.();
        waiting.delete(seq);
      }
    });
    app.post('/api/jobs', (request, reply) => {
      const id = randomUUID();
      const seq = nextSeq++;
      return new Promise<void>((committed) => {
        waiting.set(seq, committed);
        writer.postMessage({ seq, id, body: JSON.stringify(request.body) } satisfies Insert);
      }).then(() => reply.code(202).send(accepted(id)));
    });
  }

  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  app
    .listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
    .then(() => process.stdout.write('listening\n'))
    .catch((error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    });
}

if (!isMainThread && workerData === 'writer') {
  writerThread();
} else if (cluster.isPrimary && PROCESSES > 1) {
  open(5000).close(); // the table exists before two processes race to create it
  for (let i = 0; i < PROCESSES; i++) cluster.fork();
  process.once('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
  });
} else {
  httpProcess();
}
