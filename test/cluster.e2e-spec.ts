import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MALLOC_DEFAULTS } from '../src/config/malloc-env';
import { describeCounts, killFailures, steadyLoad, type LoadCounts } from './support/load';
import { trigger, waitUntil } from './support/poll';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(120_000);

const SLOW = { ms: 200 };
const CRASH_LOOP_EXIT = 4;

/** Pids of the cluster processes that reported ready, in order (from the primary's log). */
function readyPids(service: ServiceProcess): number[] {
  return service.lines.flatMap((line) => {
    const match = /"msg":"process (\d+) ready"/.exec(line);
    return match === null ? [] : [Number(match[1])];
  });
}

/** A process's environment as it started, from /proc (Linux). */
function environOf(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((entry) => {
        const at = entry.indexOf('=');
        return [entry.slice(0, at), entry.slice(at + 1)];
      }),
  );
}

function startCluster(env: Record<string, string> = {}) {
  return startService(
    // info: the primary logs each process it starts and each one that reports ready.
    { CLUSTER_PROCESSES: '2', POOL_THREADS: '1', LOG_LEVEL: 'info', ...env },
    { readyPath: '/health/ready' },
  );
}

describe('cluster (real processes, real signals)', () => {
  let service: ServiceProcess | undefined;

  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  it('drains on SIGTERM: readiness fails first, every accepted request succeeds, exit 0', async () => {
    const cluster = await startCluster({
      SHUTDOWN_DELAY_MS: '1500',
      SHUTDOWN_TIMEOUT_MS: '20000',
    });
    service = cluster;
    await waitUntil('two ready processes', () => readyPids(cluster).length >= 2);

    // Readiness failing is the load balancer's cue to stop sending: the load stops then.
    const readinessFailed = trigger();
    let succeeded = 0;
    const load = steadyLoad({
      url: cluster.url,
      path: '/api/tasks/sleep',
      body: SLOW,
      concurrency: 3,
      until: readinessFailed.promise,
      onResult: (outcome) => void (outcome === 'ok' && (succeeded += 1)),
    });
    await waitUntil('the load to get answers', () => succeeded >= 6);
    // Long tasks that are still running when the listener closes: the drain must wait for them.
    const long = [1, 2].map(() =>
      fetch(`${cluster.url}/api/tasks/sleep`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ ms: 2_500 }),
      }),
    );
    await waitUntil('the long tasks to run', async () => {
      const health = (await (await fetch(`${cluster.url}/health`)).json()) as any;
      return health.details.pool.running >= 1;
    });

    cluster.child.kill('SIGTERM');
    let readiness: { status: number; body: any } | undefined;
    await waitUntil('readiness to fail', async () => {
      const response = await fetch(`${cluster.url}/health/ready`);
      readiness = { status: response.status, body: await response.json() };
      return response.status !== 200;
    });
    readinessFailed.fire();
    const counts = await load;
    const longStatuses = await Promise.all(long.map(async (response) => (await response).status));
    const exit = await cluster.exited;
    console.log(describeCounts('SIGTERM to a 2-process cluster', counts));

    expect(readiness).toMatchObject({
      status: 503,
      body: { status: 'error', error: { lifecycle: { status: 'down' } } },
    });
    expect(longStatuses).toEqual([200, 200]);
    expect(counts.failed).toEqual({});
    expect(counts.succeeded).toBe(counts.sent);
    expect(cluster.lines.some((line) => /Draining [1-9]\d* requests/.test(line))).toBe(true);
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('replaces a process killed with SIGKILL; only requests on that process fail', async () => {
    const cluster = await startCluster();
    service = cluster;
    await waitUntil('two ready processes', () => readyPids(cluster).length >= 2);
    const victim = readyPids(cluster)[0]!;

    const stop = trigger();
    let succeeded = 0;
    const concurrency = 4;
    const load = steadyLoad({
      url: cluster.url,
      path: '/api/tasks/sleep',
      body: SLOW,
      concurrency,
      until: stop.promise,
      // A guard: under round robin, a connection handed to the victim as it died was never answered (ADR 0010).
      requestTimeoutMs: 15_000,
      onResult: (outcome) => void (outcome === 'ok' && (succeeded += 1)),
    });
    await waitUntil('the load to get answers', () => succeeded >= 8);
    process.kill(victim, 'SIGKILL');
    await cluster.waitForLine(new RegExp(`process ${victim} died \\(SIGKILL\\)`), 15_000);
    await waitUntil('a replacement process', () => readyPids(cluster).length >= 3);
    const afterReplacement = succeeded;
    await waitUntil('answers after the replacement', () => succeeded >= afterReplacement + 8);
    stop.fire();
    const counts: LoadCounts = await load;
    console.log(describeCounts('SIGKILL one of 2 processes', counts));

    const replacement = readyPids(cluster)[2]!;
    expect(replacement).not.toBe(victim);
    // At most one request per load worker can have been on the killed process.
    const { inFlight, refused, unexplainedRefusals } = killFailures(counts, cluster.lines);
    expect(inFlight).toBeLessThanOrEqual(concurrency);
    expect(unexplainedRefusals).toBe(0);
    for (const label of Object.keys(counts.failed)) {
      expect(['network error', 'no answer', 'refused']).toContain(label);
    }
    expect(counts.succeeded + inFlight + refused).toBe(counts.sent);
    expect((await fetch(`${cluster.url}/health/ready`)).status).toBe(200);
  });

  it('gives up with a non-zero exit when processes die in a loop', async () => {
    const cluster = await startService(
      {
        CLUSTER_PROCESSES: '2',
        POOL_THREADS: '1',
        // Every process fails at start: the task module cannot be loaded.
        TASK_MODULES: resolve(__dirname, 'fixtures/does-not-exist.js'),
      },
      { readyPath: null },
    );
    service = cluster;
    const exit = await cluster.exited;
    const deaths = cluster.lines.filter((line) => /"msg":"process \d+ died/.test(line)).length;
    console.log(`crash loop: ${deaths} respawns before giving up; exit ${exit.code}`);
    expect(exit).toEqual({ code: CRASH_LOOP_EXIT, signal: null });
    expect(cluster.lines.some((line) => /crash loop: \d+ processes died/.test(line))).toBe(true);
    expect(deaths).toBeGreaterThanOrEqual(1);
  });

  it('replaces every process on SIGHUP without failing a request', async () => {
    const cluster = await startCluster();
    service = cluster;
    await waitUntil('two ready processes', () => readyPids(cluster).length >= 2);
    const before = readyPids(cluster);

    const stop = trigger();
    let succeeded = 0;
    const load = steadyLoad({
      url: cluster.url,
      path: '/api/tasks/sleep',
      body: { ms: 100 },
      concurrency: 4,
      until: stop.promise,
      onResult: (outcome) => void (outcome === 'ok' && (succeeded += 1)),
    });
    await waitUntil('the load to get answers', () => succeeded >= 8);
    cluster.child.kill('SIGHUP');
    await cluster.waitForLine(/reload complete: 2 of 2 processes replaced/, 90_000);
    const afterReload = succeeded;
    await waitUntil('answers after the reload', () => succeeded >= afterReload + 8);
    stop.fire();
    const counts = await load;
    console.log(describeCounts('SIGHUP rolling reload of 2 processes', counts));

    const after = readyPids(cluster).slice(before.length);
    expect(after).toHaveLength(2);
    for (const pid of before) expect(after).not.toContain(pid);
    expect(counts.failed).toEqual({});
    expect(counts.succeeded).toBe(counts.sent);
  });

  it("gives the processes the primary forks glibc's malloc settings, and leaves an operator's own alone", async () => {
    const running = await startCluster({ MALLOC_ARENA_MAX: '4' });
    service = running;
    await waitUntil('two ready processes', () => readyPids(running).length >= 2);
    for (const pid of readyPids(running)) {
      expect(environOf(pid)).toMatchObject({
        MALLOC_ARENA_MAX: '4',
        MALLOC_TRIM_THRESHOLD_: MALLOC_DEFAULTS.MALLOC_TRIM_THRESHOLD_,
        MALLOC_MMAP_THRESHOLD_: MALLOC_DEFAULTS.MALLOC_MMAP_THRESHOLD_,
      });
    }
    // The primary itself started without them: they are the fork's, not inherited.
    expect(environOf(running.pid)).not.toHaveProperty('MALLOC_TRIM_THRESHOLD_');
  });
});
