/**
 * The library bench: the Nest example (examples/nest-app, @corepool/nestjs
 * installed from the packed packages, as a user has it) against its peer, a
 * minimal Nest + Piscina app on the same platform and Nest packages running
 * the same compiled task (bench/peers/nest-piscina.js). The targets:
 *
 * - tiny tasks (`{ rounds: 1 }`): example ÷ peer ≥ 1.00, requests per second;
 * - heavy tasks (~50 ms each): example ÷ peer ≥ 0.97;
 * - the example's liveness p99 while every thread computes ≤ 2 × its idle p99.
 *
 *   npm run bench:library                # ~3 minutes on 2 cores
 *   npm run bench:library -- --quick     # under a minute, noisier: proves it runs
 *
 * Installs and builds the example in a temporary directory first (packs
 * packages/*, as `npm run test:examples` does), then starts each app as a
 * child process on a free loopback port and drives it with autocannon.
 * Writes bench/results/<date>-library.md (not with --quick: then it prints).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyExample, packPackages, run } from '../scripts/packages/test-examples';
import { background, probe, throughput, warmUp, type Target, type Throughput } from './lib/load';
import { noteFileName, REPORT_PATHS } from './lib/report';
import { ROOT, startProgram, type Server } from './lib/servers';

const quick = process.argv.includes('--quick');
const PLAN = quick
  ? { rounds: 2, warmSeconds: 1, roundSeconds: 1, heavySeconds: 3, probeSeconds: 2 }
  : { rounds: 5, warmSeconds: 5, roundSeconds: 3, heavySeconds: 10, probeSeconds: 10 };
const CORES = Math.min(2, availableParallelism());
const TINY = { rounds: 1, seed: 'corepool' };
/** About 50 ms of SHA-256 rounds on one core. */
const HEAVY = { rounds: 15_000, seed: 'corepool' };
const TINY_CONNECTIONS = 16;
const HEAVY_CONNECTIONS = 2 * CORES;
const PROBE_RATE = 50;

interface AppResult {
  tiny: Throughput[];
  heavy?: Throughput;
  idleP99?: number;
  busyP99?: number;
}

const log = (line: string) => process.stdout.write(`${line}\n`);
const hash = (server: Server, body: object): Target => ({
  url: server.url,
  path: '/hash',
  method: 'POST',
  body: JSON.stringify(body),
  contentType: 'application/json',
});
const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? NaN;

/** The example installed from the tarballs and built, in a directory of its own. */
function installExample(work: string): string {
  const dir = copyExample('nest-app', work, packPackages(join(work, 'packages')));
  run('npm', ['install', '--no-audit', '--no-fund'], dir);
  run('npm', ['run', 'build'], dir);
  return dir;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadBefore = loadavg()[0] ?? NaN;
  const work = mkdtempSync(join(tmpdir(), 'corepool-library-bench-'));
  const servers: Server[] = [];
  try {
    const app = installExample(work);
    const env = { POOL_THREADS: String(CORES), NODE_ENV: 'production' };
    const example = await startProgram('Nest example', [join(app, 'dist', 'main.js')], env, app);
    servers.push(example);
    const peer = await startProgram(
      'Nest + Piscina peer',
      [join(ROOT, 'bench', 'peers', 'nest-piscina.js')],
      { ...env, NEST_APP_DIR: app },
    );
    servers.push(peer);
    const apps = new Map<string, { server: Server; result: AppResult }>([
      ['example', { server: example, result: { tiny: [] } }],
      ['peer', { server: peer, result: { tiny: [] } }],
    ]);

    log(`tiny tasks ${JSON.stringify(TINY)}, ${TINY_CONNECTIONS} connections, rounds side by side`);
    for (const { server } of apps.values()) {
      await throughput(hash(server, TINY), TINY_CONNECTIONS, PLAN.warmSeconds);
    }
    for (let round = 1; round <= PLAN.rounds; round++) {
      for (const [key, { server, result }] of apps) {
        const counted = await throughput(hash(server, TINY), TINY_CONNECTIONS, PLAN.roundSeconds);
        result.tiny.push(counted);
        log(
          `  round ${round} ${key}: ${Math.round(counted.perSecond)}/s, non-2xx ${counted.non2xx}`,
        );
      }
    }

    log(`heavy tasks ${JSON.stringify(HEAVY)}, ${HEAVY_CONNECTIONS} connections`);
    for (const [key, { server, result }] of apps) {
      await warmUp(hash(server, HEAVY), HEAVY_CONNECTIONS, PLAN.warmSeconds, 20 * CORES);
      result.heavy = await throughput(hash(server, HEAVY), HEAVY_CONNECTIONS, PLAN.heavySeconds);
      log(`  ${key}: ${result.heavy.perSecond.toFixed(1)}/s, non-2xx ${result.heavy.non2xx}`);
    }

    log(`liveness: GET /health/live at ${PROBE_RATE}/s idle, then with every thread busy`);
    for (const [key, { server, result }] of apps) {
      result.idleP99 = (await probe(server.url, '/health/live', PROBE_RATE, PLAN.probeSeconds)).p99;
      const stop = background(hash(server, HEAVY), HEAVY_CONNECTIONS);
      await new Promise((done) => setTimeout(done, 1000));
      result.busyP99 = (await probe(server.url, '/health/live', PROBE_RATE, PLAN.probeSeconds)).p99;
      await stop();
      log(
        `  ${key}: idle p99 ${result.idleP99.toFixed(2)} ms, busy p99 ${result.busyP99.toFixed(2)} ms`,
      );
    }

    const ex = apps.get('example')!.result;
    const pe = apps.get('peer')!.result;
    const tinyRatio =
      median(ex.tiny.map((t) => t.perSecond)) / median(pe.tiny.map((t) => t.perSecond));
    const heavyRatio = (ex.heavy?.perSecond ?? NaN) / (pe.heavy?.perSecond ?? NaN);
    const liveness = (ex.busyP99 ?? NaN) / (ex.idleP99 ?? NaN);
    const row = (target: string, measured: number, goal: string, met: boolean) =>
      `| ${target} | ${measured.toFixed(2)} | ${goal} | ${met ? 'yes' : '**no**'} |`;
    const table = [
      '| target | measured | goal | met |',
      '| --- | --- | --- | --- |',
      row('tiny tasks: example ÷ peer', tinyRatio, '≥ 1.00', tinyRatio >= 1),
      row('heavy tasks: example ÷ peer', heavyRatio, '≥ 0.97', heavyRatio >= 0.97),
      row('example liveness: busy p99 ÷ idle p99', liveness, '≤ 2.00', liveness <= 2),
    ].join('\n');
    log(`\n${table}`);
    if (quick) return;
    const note = [
      `# Library: ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
      '',
      `\`npm run bench:library\`, Node ${process.version}, ${availableParallelism()} cores, load average ` +
        `${loadBefore.toFixed(2)} before. The Nest example (examples/nest-app, Express, @corepool/nestjs from ` +
        `the packed packages, ${CORES} threads) against a minimal Nest + Piscina app with the same task ` +
        `(bench/peers/nest-piscina.js). Tiny \`${JSON.stringify(TINY)}\`: ${PLAN.rounds} rounds of ` +
        `${PLAN.roundSeconds} s side by side, ${TINY_CONNECTIONS} connections, the median counts; heavy ` +
        `\`${JSON.stringify(HEAVY)}\`: ${PLAN.heavySeconds} s, ${HEAVY_CONNECTIONS} connections; liveness at ` +
        `${PROBE_RATE}/s, open loop, ${PLAN.probeSeconds} s idle and ${PLAN.probeSeconds} s under the heavy load.`,
      '',
      table,
      '',
      '| app | tiny/s (median) | heavy/s | idle p99 ms | busy p99 ms |',
      '| --- | --- | --- | --- | --- |',
      ...[...apps].map(
        ([key, { result }]) =>
          `| ${key} | ${Math.round(median(result.tiny.map((t) => t.perSecond)))} | ` +
          `${result.heavy?.perSecond.toFixed(1)} | ${result.idleP99?.toFixed(2)} | ${result.busyP99?.toFixed(2)} |`,
      ),
      '',
    ].join('\n');
    const file = join(
      REPORT_PATHS.resultsDir,
      noteFileName({ date: startedAt.toISOString(), mode: 'library' }),
    );
    writeFileSync(file, note);
    log(`\nwrote ${file}`);
  } finally {
    for (const server of servers) await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
