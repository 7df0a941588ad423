/**
 * Lifecycle bench (docs/lifecycle.md): a 2-process cluster under keep-alive
 * load, through three SIGHUP reloads and a kill -9 of one process.
 *
 *   npm run build && npx tsx bench/lifecycle.ts
 *   npx tsx bench/lifecycle.ts --policy round-robin     # Node's default scheduling, to compare
 *   npx tsx bench/lifecycle.ts --reloads 1 --no-kill     # a short, focused run
 *   npx tsx bench/lifecycle.ts --env UV_TCP_SINGLE_ACCEPT=1   # extra environment for the service
 *
 * 1. Capacity: 32 keep-alive connections, closed loop, 4 s.
 * 2. Reload: 70 % of that capacity over 32 connections; SIGHUP three times, one after
 *    the other. Counted over the reload window: failed requests, 503s and their share.
 * 3. Crash: the same load; kill -9 of one process. Counted: failed requests, requests
 *    slower than the task deadline (hangs), and the share of the replacement in each
 *    second after the kill, and when it first reaches 40 %.
 *
 * Each request is a `which-process` fixture task (a busy-wait on a pool thread) that
 * says which process ran it. Numbers depend on the machine: say when it was shared.
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  answeringPids,
  keepAliveLoad,
  shareOf,
  tallyOutcomes,
  type KeepAliveSample,
} from '../test/support/keep-alive-load';
import { startService, type ServiceProcess } from '../test/support/service-process';
import { forAnyBuild } from './lib/older-builds';

const CONNECTIONS = 32;
const TASK_MS = 10;
const TASK_TIMEOUT_MS = 10_000;
const LOAD_SHARE = 0.7;
const TARGET_SHARE = 0.4;

const { values: args } = parseArgs({
  options: {
    policy: { type: 'string', default: 'kernel' },
    'seconds-after-kill': { type: 'string', default: '12' },
    /** Fewer reloads and no kill: a short, focused run. */
    reloads: { type: 'string', default: '3' },
    'no-kill': { type: 'boolean', default: false },
    /** Extra environment for the service, `NAME=value,NAME=value`. */
    env: { type: 'string', default: '' },
    /** Another checkout whose build (`dist/main.js`) runs instead of this one's: a baseline. */
    checkout: { type: 'string' },
    /** Writes every sample and the service's log lines to this JSON file, for a timeline. */
    dump: { type: 'string' },
  },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, check: () => boolean, timeoutMs = 90_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function linesMatching(service: ServiceProcess, pattern: RegExp): RegExpExecArray[] {
  return service.lines.flatMap((line) => {
    const match = pattern.exec(line);
    return match === null ? [] : [match];
  });
}

const readyPids = (service: ServiceProcess) =>
  linesMatching(service, /"msg":"process (\d+) ready"/).map((match) => Number(match[1]));

/** The processes' own count of the 503s they answered (their access-log lines carry their pid). */
function saturatedByProcess(service: ServiceProcess): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of service.lines) {
    if (!line.includes('"statusCode":503')) continue;
    const pid = /"pid":(\d+)/.exec(line)?.[1] ?? '?';
    counts[pid] = (counts[pid] ?? 0) + 1;
  }
  return counts;
}

function summary(samples: readonly KeepAliveSample[]) {
  const outcomes = tallyOutcomes(samples);
  const saturated = outcomes.POOL_SATURATED ?? 0;
  const failed = samples.length - (outcomes.ok ?? 0) - saturated;
  const slowest = Math.max(0, ...samples.map((s) => s.latencyMs));
  const hung = samples.filter((s) => s.latencyMs > TASK_TIMEOUT_MS).length;
  return {
    requests: samples.length,
    outcomes,
    failed,
    saturated,
    slowestMs: Math.round(slowest),
    hung,
  };
}

async function main(): Promise<void> {
  const policy = args.policy;
  const service = await startService(
    forAnyBuild({
      CLUSTER_PROCESSES: '2',
      POOL_THREADS: '1',
      CLUSTER_SCHEDULING_POLICY: policy,
      TASK_TIMEOUT_MS: String(TASK_TIMEOUT_MS),
      LOG_LEVEL: 'info',
      ...Object.fromEntries(
        args.env
          .split(',')
          .filter((pair) => pair.includes('='))
          .map((pair) => pair.split('=', 2) as [string, string]),
      ),
    }),
    { readyPath: '/health/ready', timeoutMs: 60_000, cwd: args.checkout },
  );
  // Sample times are on performance.now()'s clock; timeOrigin turns them into the log's epoch ms.
  const dump: Record<string, unknown> = { timeOrigin: performance.timeOrigin };
  try {
    await waitFor('two ready processes', () => readyPids(service).length >= 2);
    const base = { url: service.url, connections: CONNECTIONS, taskMs: TASK_MS };
    // A request unanswered this long after the deadline has hung: the client gives up.
    const requestTimeoutMs = TASK_TIMEOUT_MS + 5_000;

    // 1. Capacity.
    const probe = keepAliveLoad({ ...base, requestTimeoutMs });
    await sleep(1_000);
    const from = performance.now();
    await sleep(4_000);
    const measured = (await probe.stop()).filter((s) => s.outcome === 'ok' && s.at >= from);
    const capacity = measured.length / ((performance.now() - from) / 1000);
    const rate = Math.round(capacity * LOAD_SHARE);
    console.log(`build ${args.checkout ?? 'this checkout'}`);
    console.log(`policy ${policy}: capacity ~${capacity.toFixed(0)} req/s; load ${rate} req/s`);

    // 2. Three reloads, one after the other.
    const reloadLoad = keepAliveLoad({ ...base, ratePerSecond: rate, requestTimeoutMs });
    await sleep(2_000);
    const reloadStart = performance.now();
    const reloads = Number(args.reloads);
    for (let reload = 1; reload <= reloads; reload++) {
      service.child.kill('SIGHUP');
      await waitFor(
        `reload ${reload}`,
        () => linesMatching(service, /reload complete: 2 of 2/).length >= reload,
      );
    }
    const reloadEnd = performance.now();
    await sleep(1_000);
    const allReloadSamples = await reloadLoad.stop();
    Object.assign(dump, { reloadStart, reloadEnd, reloadSamples: allReloadSamples });
    const reloadSamples = allReloadSamples.filter(
      (s) => s.at >= reloadStart && s.at <= reloadEnd + 1_000,
    );
    const reload = summary(reloadSamples);
    console.log(
      `reload x${reloads} (${((reloadEnd - reloadStart) / 1000).toFixed(1)} s): ${JSON.stringify(reload)}; ` +
        `503 share ${((100 * reload.saturated) / Math.max(1, reload.requests)).toFixed(2)} %`,
    );

    const answeredBy = tallyOutcomes(
      reloadSamples
        .filter((s) => s.pid !== undefined)
        .map((s) => ({ ...s, outcome: String(s.pid) })),
    );
    console.log(
      `reload: answers by process ${JSON.stringify(answeredBy)}; 503s by process ${JSON.stringify(saturatedByProcess(service))}`,
    );
    if (args['no-kill']) return;

    // 3. kill -9 of one process.
    const crashLoad = keepAliveLoad({ ...base, ratePerSecond: rate, requestTimeoutMs });
    await sleep(2_000);
    const [victim] = answeringPids(crashLoad.samples.slice(-100));
    if (victim === undefined) throw new Error('no process answered');
    const readyBefore = readyPids(service).length;
    const killedAt = performance.now();
    process.kill(victim, 'SIGKILL');
    await waitFor('a replacement', () => readyPids(service).length > readyBefore, 30_000);
    const replacement = readyPids(service)[readyBefore]!;
    const readyAfterMs = performance.now() - killedAt;
    await sleep(Number(args['seconds-after-kill']) * 1000);
    const crashSamples = await crashLoad.stop();
    Object.assign(dump, { killedAt, victim, replacement, crashSamples });
    const afterKill = crashSamples.filter((s) => s.at >= killedAt);
    const perSecond: string[] = [];
    let reachedAt: number | undefined;
    for (let second = 0; second < Number(args['seconds-after-kill']); second++) {
      const start = killedAt + second * 1000;
      const share = shareOf(afterKill, replacement, start, start + 1000);
      perSecond.push(`${(share * 100).toFixed(0)}%`);
      if (reachedAt === undefined && share >= TARGET_SHARE) reachedAt = second + 1;
    }
    console.log(
      `kill -9: replacement ready ${readyAfterMs.toFixed(0)} ms after the kill; ` +
        `${JSON.stringify(summary(afterKill))}`,
    );
    console.log(`replacement's share per second after the kill: ${perSecond.join(' ')}`);
    console.log(
      reachedAt === undefined
        ? `replacement never reached ${TARGET_SHARE * 100} % of a second's answers`
        : `replacement first served >= ${TARGET_SHARE * 100} % of the answers in second ${reachedAt} after the kill`,
    );
  } finally {
    if (args.dump !== undefined)
      writeFileSync(args.dump, JSON.stringify({ ...dump, lines: service.lines }));
    await service.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
