/**
 * The crowd bench: many patient keep-alive clients at once, as load testers
 * (k6 VUs, autocannon connections) and real crowds offer them. A closed crowd
 * cannot offer more than the machine's capacity (every client waits for its
 * answer before asking again), so it should be served in line, not refused
 * (docs/overload.md, "A crowd is not an overload").
 *
 *   npm run bench:crowd                      # ~6 minutes on 2 cores
 *   npm run bench:crowd -- --quick           # shorter and noisier
 *   npm run bench:crowd -- --clients=1000 --tasks=tiny --servers=lean,default
 *   npm run bench:crowd -- --variant=NAME=VALUE,…  # the default shape with those settings too
 *
 * Per server (corepool in its default shape, corepool as 1 process × 2
 * threads, the lean peer — bare Fastify + Piscina, one process, no queue
 * bound), per task (tiny; medium, ~5 ms) and per crowd size (100, 1,000,
 * 10,000 clients, 20 s client timeout, no deadline header): goodput (2xx per
 * second), p50/p99 of every answer, errors and timeouts, corepool's refusals
 * by reason, and the p99 of a liveness probe on a connection of its own.
 * Writes bench/results/<date>-crowd.md (not with a filter: then it prints).
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { buildIfNeeded } from './lib/build';
import { probe } from './lib/load';
import { variantsOf } from './lib/variants';
import { crowdTable, type CrowdCell, type CrowdTask } from './lib/crowd-table';
import { noteFileName, REPORT_PATHS } from './lib/report';
import { startBaseline, startService, type Server } from './lib/servers';

const quick = process.argv.includes('--quick');
const listArg = (name: string): string[] | undefined =>
  process.argv
    .find((arg) => arg.startsWith(`--${name}=`))
    ?.slice(name.length + 3)
    .split(',')
    .filter(Boolean);

const CORES = Math.min(2, availableParallelism());
const SECONDS = quick ? 5 : 10;
/** Warm-up requests per client: a fixed amount, so that it ends with every request answered. */
const WARM_REQUESTS_PER_CLIENT = quick ? 10 : 30;
/**
 * A crowd stopped on time leaves its requests in flight: the service sees
 * clients giving up, and counts that as evidence of impatience for one to
 * two windows of 10 × SCHEDULER_INTERVAL_MS (ADR 0052). The next crowd comes
 * after that has faded, as a new crowd would.
 */
const PAUSE_BETWEEN_CROWDS_MS = 11_000;
const CLIENT_TIMEOUT_S = 20;
const PROBE_RATE = 20;

const TASKS = {
  tiny: { iterations: 2_000, payloadSize: 10 },
  medium: { iterations: 220_000, payloadSize: 10 },
} as const;
type TaskName = CrowdTask;

interface ServerPlan {
  readonly key: string;
  readonly label: string;
  start(): Promise<Server>;
  /** The route the tasks go to. */
  readonly path: string;
  readonly corepool: boolean;
}

const VARIANTS: readonly ServerPlan[] = variantsOf(process.argv).map(({ key, env }) => ({
  key,
  label: `corepool, default shape, ${Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join(', ')}`,
  path: '/api/compute',
  corepool: true,
  start: () => startService(`corepool ${key}`, { LOG_LEVEL: 'warn', ...env }),
}));

const SERVERS: readonly ServerPlan[] = [
  {
    key: 'lean',
    label: `lean: Fastify + Piscina, 1 × ${CORES}`,
    path: '/api/tasks/compute',
    corepool: false,
    start: () => startBaseline('lean', 'lean-server.ts', { POOL_THREADS: String(CORES) }),
  },
  {
    key: 'default',
    label: 'corepool, default shape',
    path: '/api/compute',
    corepool: true,
    start: () => startService('corepool default', { LOG_LEVEL: 'warn' }),
  },
  {
    key: 'one-process',
    label: `corepool, 1 × ${CORES}`,
    path: '/api/compute',
    corepool: true,
    start: () =>
      startService('corepool 1 process', {
        LOG_LEVEL: 'warn',
        CLUSTER_PROCESSES: '1',
        POOL_THREADS: String(CORES),
      }),
  },
];

function crowd(
  url: string,
  path: string,
  body: string,
  connections: number,
  length: { duration: number } | { amount: number },
): Promise<autocannon.Result> {
  return new Promise((done, fail) => {
    autocannon(
      {
        url: `${url}${path}`,
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        connections,
        ...length,
        timeout: CLIENT_TIMEOUT_S,
      },
      (error: unknown, result: autocannon.Result) =>
        error instanceof Error
          ? fail(error)
          : error
            ? fail(new Error('autocannon failed'))
            : done(result),
    );
  });
}

/** corepool's refusals so far, by reason, from its merged scrape. */
async function refusalsOf(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(
    /^compute_scheduler_refusals_total\{reason="([^"]+)"\} (\S+)/gm,
  )) {
    counts[match[1]!] = Number(match[2]);
  }
  return counts;
}

function difference(after: Record<string, number>, before: Record<string, number>) {
  const out: Record<string, number> = {};
  for (const [reason, count] of Object.entries(after)) {
    const delta = count - (before[reason] ?? 0);
    if (delta > 0) out[reason] = delta;
  }
  return out;
}

async function measureCell(
  plan: ServerPlan,
  server: Server,
  task: TaskName,
  clients: number,
): Promise<CrowdCell> {
  const body = JSON.stringify(TASKS[task]);
  // A short crowd first: threads warm, the cost model measured.
  const warmClients = Math.min(clients, 100);
  await crowd(server.url, plan.path, body, warmClients, {
    amount: warmClients * WARM_REQUESTS_PER_CLIENT,
  });
  const before = plan.corepool ? await refusalsOf(server.url) : {};
  const [result, liveness] = await Promise.all([
    crowd(server.url, plan.path, body, clients, { duration: SECONDS }),
    probe(server.url, '/health/live', PROBE_RATE, SECONDS - 1),
  ]);
  const refusals = plan.corepool ? difference(await refusalsOf(server.url), before) : {};
  const cell: CrowdCell = {
    server: plan.key,
    task,
    clients,
    goodput: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors - result.timeouts,
    timeouts: result.timeouts,
    refusals,
    livenessP99: liveness.p99,
  };
  log(
    `${plan.key.padEnd(12)} ${task.padEnd(6)} ${String(clients).padStart(6)} clients: ` +
      `${Math.round(cell.goodput)} 2xx/s, p50 ${cell.p50} ms, p99 ${cell.p99} ms, ` +
      `non-2xx ${cell.non2xx}, errors ${cell.errors}, timeouts ${cell.timeouts}, ` +
      `refused ${JSON.stringify(refusals)}, liveness p99 ${cell.livenessP99.toFixed(1)} ms`,
  );
  return cell;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Runs the plan; every server in turn on the same machine, one at a time. */
export async function runCrowd(options: {
  servers?: readonly string[];
  tasks?: readonly TaskName[];
  clients?: readonly number[];
}): Promise<CrowdCell[]> {
  const servers = [...SERVERS, ...VARIANTS].filter(
    (plan) => options.servers?.includes(plan.key) ?? true,
  );
  const tasks = options.tasks ?? (['tiny', 'medium'] as const);
  const sizes = options.clients ?? [100, 1_000, 10_000];
  const cells: CrowdCell[] = [];
  for (const plan of servers) {
    const server = await plan.start();
    try {
      for (const task of tasks) {
        for (const clients of sizes) {
          if (cells.at(-1)?.server === plan.key) await sleep(PAUSE_BETWEEN_CROWDS_MS);
          cells.push(await measureCell(plan, server, task, clients));
        }
      }
    } finally {
      await server.stop();
    }
  }
  return cells;
}

async function main(): Promise<void> {
  buildIfNeeded(log);
  const filtered =
    VARIANTS.length > 0 ||
    ['servers', 'tasks', 'clients'].some((name) => listArg(name) !== undefined);
  const startedAt = new Date();
  const loadBefore = loadavg()[0]!;
  const cells = await runCrowd({
    servers: listArg('servers'),
    tasks: listArg('tasks') as TaskName[] | undefined,
    clients: listArg('clients')?.map(Number),
  });
  const table = crowdTable(cells);
  log(`\n${table}`);
  if (filtered) return;
  const note = [
    `# Crowd: ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `\`npm run bench:crowd${quick ? ' -- --quick' : ''}\`, Node ${process.version}, ${availableParallelism()} cores, ` +
      `load average ${loadBefore.toFixed(2)} before. Keep-alive clients (autocannon), ${SECONDS} s per cell ` +
      `after ${WARM_REQUESTS_PER_CLIENT} warm-up requests per client (at most 100 clients), ${CLIENT_TIMEOUT_S} s client timeout, no deadline header; ` +
      `tiny task \`${JSON.stringify(TASKS.tiny)}\`, medium \`${JSON.stringify(TASKS.medium)}\`. ` +
      `Liveness: \`GET /health/live\` at ${PROBE_RATE}/s, open loop, on a connection of its own.`,
    '',
    table,
    '',
  ].join('\n');
  const file = join(
    REPORT_PATHS.resultsDir,
    noteFileName({ date: startedAt.toISOString(), mode: 'crowd' }),
  );
  writeFileSync(file, note);
  log(`\nwrote ${file}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
