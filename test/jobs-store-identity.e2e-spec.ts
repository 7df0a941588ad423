import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { getOnNewConnection, submitOnNewConnection, type Json } from './support/jobs-client';
import { waitUntil } from './support/poll';
import { freshJobsPath, startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(240_000);

/**
 * The SQLite store's file deleted, moved, replaced or made read-only under a
 * running cluster, while submissions run: every process stops taking jobs
 * (503 QUEUE_UNAVAILABLE), fails readiness with the reason, logs it once, and
 * none creates a new file at the path (docs/jobs.md, "The store's identity").
 */
describe('the job store file changed under a running service (SQLite, 2 processes)', () => {
  let service: ServiceProcess;
  let path: string;
  let storeId: string;

  beforeEach(async () => {
    ({ service, path, storeId } = await startWatchedService('200'));
  });
  afterEach(() => service.stop());

  it('deleted: refuses jobs and readiness, and a process started after it opens no new file', async () => {
    const load = submitting(service.url);
    await load.started;
    const acknowledged = load.answers.filter((answer) => answer.status === 202).length;
    unlinkSync(path);
    await expectStoreLost('missing');
    expect(await load.stop()).toEqual(onlyAcceptedOrUnavailable(load.answers));
    // Each process says how many jobs the deleted file it holds has: at least every one acknowledged before.
    for (const line of lostLines('missing')) {
      const held =
        /holds open has (\d+) jobs \(\d+ queued or running\) that no other process sees/.exec(line);
      expect(Number(held?.[1])).toBeGreaterThanOrEqual(acknowledged);
    }

    // A process the primary starts again finds no file, and makes none.
    const pid = clusterProcessPids(service)[0] as number;
    process.kill(pid, 'SIGKILL');
    await service.waitForLine(/Job store unavailable \(not-opened\): no job store at/, 60_000);
    // The other process still says what it saw.
    await expectUnavailable('not-opened', 'missing');
    expect(existsSync(path)).toBe(false);
  });

  it('a process that could not open the store when it started (not a database at the path) opens it once the file is restored, without a restart', async () => {
    // A restore in progress: the store set aside, something else at its path.
    renameSync(path, `${path}.aside`);
    writeFileSync(path, 'not a database, yet'.repeat(256));
    await expectStoreLost('replaced');
    process.kill(clusterProcessPids(service)[0] as number, 'SIGKILL');
    await service.waitForLine(
      /Job store unavailable \(not-opened\): .*file is not a database/,
      60_000,
    );

    renameSync(`${path}.aside`, path);
    await service.waitForLine(
      new RegExp(`Job store ${storeId} opened at \\S+, after it could not be opened at first`),
      30_000,
    );
    await expectServedAgain('Job store \\S+ (is back|opened at \\S+, after)');
  });

  it('moved: refuses jobs and readiness until it is moved back', async () => {
    const load = submitting(service.url);
    await load.started;
    renameSync(path, `${path}.moved`);
    await expectStoreLost('missing');
    expect(await load.stop()).toEqual(onlyAcceptedOrUnavailable(load.answers));
    expect(existsSync(path)).toBe(false);

    renameSync(`${path}.moved`, path);
    await expectServedAgain();
  });

  it('replaced by a copy (a backup restored over it): refuses jobs and readiness, and leaves the copy alone', async () => {
    const load = submitting(service.url);
    await load.started;
    copyFileSync(path, `${path}.copy`);
    renameSync(`${path}.copy`, path);
    const copy = statSync(path);
    await expectStoreLost('replaced');
    expect(await load.stop()).toEqual(onlyAcceptedOrUnavailable(load.answers));
    expect(statSync(path).ino).toBe(copy.ino);
  });

  it('made read-only (its mode bits, which bind root too): refuses jobs and readiness until writable again', async () => {
    const load = submitting(service.url);
    await load.started;
    const before = statSync(path);
    chmodSync(path, 0o444);
    await expectStoreLost('read-only');
    expect(await load.stop()).toEqual(onlyAcceptedOrUnavailable(load.answers));
    expect(statSync(path).ino).toBe(before.ino);

    chmodSync(path, 0o644);
    await expectServedAgain();
  });

  const lostLines = (problem: string) =>
    service.lines.filter((line) => line.includes(`Job store unavailable (${problem})`));

  /** Both processes noticed (one line each), and answer no submission or probe as if all were well. */
  async function expectStoreLost(problem: string): Promise<void> {
    await waitUntil('both processes to log the lost store', () => lostLines(problem).length >= 2, {
      timeoutMs: 30_000,
    });
    await expectUnavailable(problem);
    // Once per process, not once per request.
    expect(lostLines(problem)).toHaveLength(2);
    expect(lostLines(problem).every((line) => line.includes(path))).toBe(true);
  }

  async function expectUnavailable(...problems: string[]): Promise<void> {
    for (let i = 0; i < 8; i++) {
      const submitted = await submitOnNewConnection(service.url, 'factorial', { n: 20 });
      expect([submitted.status, submitted.body.code]).toEqual([503, 'QUEUE_UNAVAILABLE']);
      expect(submitted.body.detail).toMatch(new RegExp(`SQLite job store (${problems.join('|')})`));
      const ready = await getOnNewConnection(`${service.url}/health/ready`);
      expect(ready.status).toBe(503);
      expect(ready.body.error.jobStore).toMatchObject({ status: 'down', path });
      expect(problems).toContain(ready.body.error.jobStore.problem);
    }
  }

  /** `back`: the line each process logs when it serves the store again. */
  async function expectServedAgain(back = `Job store ${storeId} is back`): Promise<void> {
    // Both, not one: the cluster hands connections to whichever process is free,
    // so the submissions below alone may all reach the one that noticed first.
    const pattern = new RegExp(back);
    await waitUntil(
      'both processes to say the store is back',
      () => service.lines.filter((line) => pattern.test(line)).length >= 2,
      { timeoutMs: 30_000 },
    );
    await waitUntil(
      'every process to take jobs again',
      async () => {
        const answers = await Promise.all(
          Array.from({ length: 6 }, () =>
            submitOnNewConnection(service.url, 'factorial', { n: 20 }),
          ),
        );
        return answers.every((answer) => answer.status === 202);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const ready = await getOnNewConnection(`${service.url}/health/ready`);
    // The job store's check alone: the pool may still be busy with the submissions above.
    expect(ready.body.details.jobStore).toMatchObject({ status: 'up', storeId });
  }
});

/**
 * Two processes on a fresh store, checking its file every `checkIntervalMs`,
 * once both opened it and readiness shows it.
 */
async function startWatchedService(checkIntervalMs: string) {
  const path = freshJobsPath();
  const service = await startService(
    {
      JOBS_SQLITE_PATH: path,
      CLUSTER_PROCESSES: '2',
      POOL_THREADS: '1',
      JOBS_SQLITE_CHECK_INTERVAL_MS: checkIntervalMs,
    },
    // Both processes opened the store; a shared machine may take a while to start them.
    { readyLines: { pattern: /Job store \S+ opened at/, count: 2 }, timeoutMs: 90_000 },
  );
  // Readiness may still wait for warm threads; the job store's check is what matters here.
  let jobStore: Json | undefined;
  await waitUntil('the job store check in readiness', async () => {
    const ready = await getOnNewConnection(`${service.url}/health/ready`);
    jobStore = (ready.body.details as Json | undefined)?.jobStore as Json | undefined;
    return jobStore !== undefined;
  });
  expect(jobStore).toMatchObject({ status: 'up', path });
  return { service, path, storeId: jobStore?.storeId as string };
}

/**
 * The acknowledgement itself waits for the file: each group commit is
 * confirmed to have gone to the file still at the path before any of its
 * callers hears 202 (ADR 0042). The periodic check is set far longer than the
 * test, so only that confirmation can refuse.
 */
describe('the job store file deleted under submissions at 200/s (SQLite, 2 processes)', () => {
  let service: ServiceProcess;
  let path: string;

  beforeEach(async () => {
    ({ service, path } = await startWatchedService('60000'));
  });
  afterEach(() => service.stop());

  it('deleted under submissions at 200/s: none sent after the delete is acknowledged, and every acknowledged job is in the file the processes hold', async () => {
    const load = submittingAtRate(service.url, 200);
    // A second of them: each process has acknowledged some (new connections go to either).
    await waitUntil('200 submissions acknowledged', () => load.acknowledged() >= 200);
    unlinkSync(path);
    const deletedAt = performance.now();
    await waitUntil(
      'answers to 100 submissions sent after the delete',
      () => load.answers.filter((answer) => answer.sentAt > deletedAt).length >= 100,
      { timeoutMs: 60_000 },
    );
    const answers = await load.stop();
    const outcomes = answers.map(({ status, code }) => ({ status, code }));
    expect(outcomes).toEqual(onlyAcceptedOrUnavailable(outcomes));
    const acknowledged = answers.filter((answer) => answer.status === 202);
    // Refused from the first commit after the delete, not from a later periodic check.
    expect(acknowledged.filter((answer) => answer.sentAt > deletedAt)).toEqual([]);
    // What was acknowledged before is in the deleted file, which the processes still hold open
    // and say so (the log line counts its jobs): an operator can copy it out (docs/operations.md).
    const held = heldJobIds(clusterProcessPids(service), path);
    expect(acknowledged.filter((answer) => !held.has(answer.id as string))).toEqual([]);
    // Each process (both had submissions after the delete) logged it, once.
    const lost = () =>
      service.lines.filter((line) => line.includes('Job store unavailable (missing)'));
    await waitUntil('both processes to log the lost store', () => lost().length >= 2);
    expect(lost()).toHaveLength(2);
  });
});

interface Answer {
  readonly status: number;
  readonly code?: string;
}

/**
 * Submissions one after another on new connections, until stopped: `started`
 * once one was accepted, `stop` resolves with every answer.
 */
function submitting(url: string) {
  const answers: Answer[] = [];
  let running = true;
  let accepted: () => void = () => undefined;
  const started = new Promise<void>((done) => (accepted = done));
  const loop = (async () => {
    while (running) {
      const { status, body } = await submitOnNewConnection(url, 'factorial', { n: 20 });
      answers.push({ status, code: body.code as string | undefined });
      if (status === 202) accepted();
    }
  })();
  return {
    answers,
    started,
    stop: async () => {
      running = false;
      await loop;
      return answers;
    },
  };
}

interface TimedAnswer extends Answer {
  /** When the submission was sent, on `performance.now()`'s clock. */
  readonly sentAt: number;
  readonly id?: string;
}

/**
 * Submissions at `perSecond`, open loop (at most 64 in flight), each on a
 * new connection (so that both processes get some), until stopped; every
 * answer with when it was sent.
 */
function submittingAtRate(url: string, perSecond: number) {
  const answers: TimedAnswer[] = [];
  const inFlight = new Set<Promise<void>>();
  let running = true;
  const loop = (async () => {
    const intervalMs = 1000 / perSecond;
    let next = performance.now();
    while (running) {
      next += intervalMs;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (inFlight.size >= 64) await Promise.race(inFlight);
      const sentAt = performance.now();
      const sent = submitOnNewConnection(url, 'factorial', { n: 20 }).then(({ status, body }) => {
        answers.push({ status, code: body.code as string | undefined, sentAt, id: body.id });
        inFlight.delete(sent);
      });
      inFlight.add(sent);
    }
    await Promise.all(inFlight);
  })();
  return {
    answers,
    acknowledged: () => answers.filter((answer) => answer.status === 202).length,
    stop: async () => {
      running = false;
      await loop;
      return answers;
    },
  };
}

/**
 * The ids of the jobs in a deleted store that a process still holds open: its
 * file copied out of /proc (as docs/operations.md tells an operator), with the
 * write-ahead log still at the path copied first, so that a checkpoint in
 * between loses nothing.
 */
function heldJobIds(pids: readonly number[], path: string): Set<string> {
  const dir = mkdtempSync(join(tmpdir(), 'corepool-held-'));
  const copy = join(dir, 'held.sqlite');
  const fd = pids
    .flatMap((pid) => readdirSync(`/proc/${pid}/fd`).map((entry) => `/proc/${pid}/fd/${entry}`))
    .find((link) => {
      try {
        return readlinkSync(link) === `${path} (deleted)`;
      } catch {
        return false;
      }
    });
  if (fd === undefined) throw new Error(`no process holds ${path} open`);
  if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
  copyFileSync(fd, copy);
  const db = new DatabaseSync(copy);
  try {
    const rows = db.prepare('SELECT id FROM jobs').all() as Array<{ id: string }>;
    return new Set(rows.map((row) => row.id));
  } finally {
    db.close();
  }
}

/** The answers, each 202 or 503 QUEUE_UNAVAILABLE: the shape they must have, for `toEqual`. */
function onlyAcceptedOrUnavailable(answers: readonly Answer[]): Answer[] {
  return answers.map((answer) =>
    answer.status === 202 ? answer : { status: 503, code: 'QUEUE_UNAVAILABLE' },
  );
}

/** The HTTP processes' pids, as the primary logs them. */
function clusterProcessPids(service: ServiceProcess): number[] {
  return service.lines
    .map((line) => /"msg":"process (\d+) started"/.exec(line)?.[1])
    .filter((pid) => pid !== undefined)
    .map(Number);
}
