import { chmodSync, copyFileSync, existsSync, renameSync, statSync, unlinkSync } from 'node:fs';
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
    path = freshJobsPath();
    service = await startService(
      {
        JOBS_SQLITE_PATH: path,
        CLUSTER_PROCESSES: '2',
        POOL_THREADS: '1',
        JOBS_SQLITE_CHECK_INTERVAL_MS: '200',
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
    storeId = jobStore?.storeId as string;
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

  async function expectServedAgain(): Promise<void> {
    // Both, not one: the cluster hands connections to whichever process is free,
    // so the submissions below alone may all reach the one that noticed first.
    await waitUntil(
      'both processes to say the store is back',
      () =>
        service.lines.filter((line) => line.includes(`Job store ${storeId} is back`)).length >= 2,
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
