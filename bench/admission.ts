/**
 * The admission bench: does the scheduler refuse only what cannot succeed?
 *
 *   npm run bench:admission                          # ~15 minutes on 2 cores
 *   npm run bench:admission -- --requests=200        # shorter
 *   npm run bench:admission -- --before=<checkout>   # another build side by side
 *   npm run bench:admission -- --tasks=hash,compute  # only these idle sequences
 *
 * Two scenarios, per build (this checkout's `dist/`, and `--before`'s):
 * - **idle sequences**: for each built-in task, a sequence of requests of
 *   random sizes (evenly on a log scale, from tiny to a second or so of
 *   work) and random deadlines (`x-request-timeout-ms`, 10 ms to 2 s), sent
 *   one at a time, so the pool is idle at each arrival. Every 503 is sent
 *   again with a 30 s deadline: if it then ran in less than 0.8 × the deadline
 *   it was refused, it was refused wrongly. The sequence is the same for
 *   every build (a fixed seed).
 * - **cold burst**: a fresh service (`TASK_TIMEOUT_MS=5000`), 200 `compute`
 *   requests of 5 M iterations at once; then the same burst on the service,
 *   now warm. Per burst: how soon the refusals came (p50, p90), the 504s,
 *   and the successes within the deadline over the burst's first 10 s.
 * Writes bench/results/<date>-admission.md.
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { mulberry32 } from '../src/tasks/seeded-random';
import { invoicePdf } from '../test/support/pdf-fixtures';
import { buildIfNeeded } from './lib/build';
import { noteFileName, REPORT_PATHS } from './lib/report';
import { startService, type Server } from './lib/servers';
import { fmt, markdownTable, percentile } from './lib/stats';

const option = (name: string) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const REQUESTS = Number(option('requests') ?? '1000');
const BEFORE = option('before');
/** `--tasks=a,b`: only these tasks' idle sequences (all built-in tasks by default). */
const TASKS = option('tasks')?.split(',');
const THREADS = Math.min(2, availableParallelism());
/** A refusal is wrong if the task then ran in less than this share of the deadline it was refused at. */
const WRONG_BELOW = 0.8;
/** Longer than the service's CANCEL_GRACE_MS (300 ms): a stopped task has left its thread by then. */
const STOP_GRACE_MS = 500;
const BURST = { requests: 200, deadlineMs: 5000, input: { iterations: 5_000_000 } };

const logUniform = (random: () => number, low: number, high: number) =>
  Math.round(low * (high / low) ** random());

/** One request of a task: a JSON body, or raw bytes with a query string. */
interface Request {
  readonly path: string;
  readonly body: Uint8Array | string;
  readonly contentType: string;
}

const json = (task: string, input: unknown): Request => ({
  path: `/api/tasks/${task}`,
  body: JSON.stringify(input),
  contentType: 'application/json',
});
const bytes = (
  task: string,
  body: Uint8Array,
  query = '',
  contentType = 'application/octet-stream',
): Request => ({ path: `/api/tasks/${task}${query}`, body, contentType });

/** Words to compress: text-like, so the compressor has work to do. */
function text(random: () => number, length: number): Uint8Array {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'pool', 'thread', 'queue', 'deadline'];
  let out = '';
  while (out.length < length) out += `${words[Math.floor(random() * words.length)]} `;
  return new TextEncoder().encode(out.slice(0, length));
}

/** Each built-in task, with a request of a random size from tiny to about a second of work. */
async function generators(): Promise<Record<string, (random: () => number) => Request>> {
  const pdfs = await Promise.all(
    [1, 2, 4, 8, 16, 32, 64].map((pages) =>
      invoicePdf(Array.from({ length: pages }, (_, page) => `page ${page} `.repeat(40))),
    ),
  );
  return {
    compute: (random) => json('compute', { iterations: logUniform(random, 10, 20_000_000) }),
    factorial: (random) => json('factorial', { n: logUniform(random, 1, 60_000) }),
    'matrix-multiply': (random) =>
      json('matrix-multiply', { size: logUniform(random, 2, 600), seed: 7 }),
    hash: (random) => bytes('hash', new Uint8Array(logUniform(random, 1, 32 << 20)).fill(7)),
    compress: (random) =>
      bytes('compress', text(random, logUniform(random, 1, 8 << 20)), '?format=gzip&level=6'),
    'json-stats': (random) =>
      json(
        'json-stats',
        Array.from({ length: logUniform(random, 1, 300_000) }, (_, id) => ({ id, value: id % 97 })),
      ),
    'pdf-extract': (random) =>
      bytes(
        'pdf-extract',
        pdfs[Math.floor(random() * pdfs.length)] as Uint8Array,
        '',
        'application/pdf',
      ),
  };
}

async function send(server: Server, request: Request, deadlineMs: number) {
  const started = performance.now();
  const response = await fetch(`${server.url}${request.path}`, {
    method: 'POST',
    headers: {
      'content-type': request.contentType,
      'x-request-timeout-ms': String(deadlineMs),
    },
    body: request.body,
  });
  // A task whose output is bytes (compress) answers with them, not JSON.
  const body: { reason?: string; executionTimeMs?: number } = response.headers
    .get('content-type')
    ?.includes('json')
    ? ((await response.json()) as { reason?: string; executionTimeMs?: number })
    : (await response.arrayBuffer(), {});
  return {
    status: response.status,
    reason: body.reason,
    runMs: body.executionTimeMs ?? performance.now() - started,
    ms: performance.now() - started,
  };
}

interface SequenceResult {
  readonly task: string;
  readonly ok: number;
  readonly refused: number;
  readonly wronglyRefused: number;
  /** Each wrong refusal: its reason, the deadline it was refused at, and the time it then ran. */
  readonly wrongly: string[];
  readonly timedOut: number;
  readonly other: number;
}

async function idleSequence(
  server: Server,
  task: string,
  generate: (random: () => number) => Request,
): Promise<SequenceResult> {
  const random = mulberry32(41);
  const result = {
    task,
    ok: 0,
    refused: 0,
    wronglyRefused: 0,
    wrongly: [] as string[],
    timedOut: 0,
    other: 0,
  };
  for (let index = 0; index < REQUESTS; index++) {
    const request = generate(random);
    const deadlineMs = logUniform(random, 10, 2000);
    const answer = await send(server, request, deadlineMs);
    if (answer.status === 200) result.ok += 1;
    else if (answer.status === 504) {
      result.timedOut += 1;
      // The task stops within its grace: the next request must find the pool idle again.
      await new Promise((done) => setTimeout(done, STOP_GRACE_MS));
    } else if (answer.status === 503) {
      result.refused += 1;
      const again = await send(server, request, 30_000);
      if (again.status === 200 && again.runMs < WRONG_BELOW * deadlineMs) {
        result.wronglyRefused += 1;
        result.wrongly.push(
          `${answer.reason} at ${deadlineMs} ms, ran ${Math.round(again.runMs)} ms`,
        );
      }
    } else result.other += 1;
  }
  log(`    ${task}: ${JSON.stringify(result)}`);
  return result;
}

interface BurstResult {
  readonly ok: number;
  readonly okInTime: number;
  readonly refused: number;
  readonly timedOut: number;
  readonly refusalP50Ms: number;
  readonly refusalP90Ms: number;
}

async function burst(server: Server): Promise<BurstResult> {
  const request = json('compute', BURST.input);
  const answers = await Promise.all(
    Array.from({ length: BURST.requests }, () => send(server, request, BURST.deadlineMs)),
  );
  const refusals = answers
    .filter((a) => a.status === 503)
    .map((a) => a.ms)
    .sort((a, b) => a - b);
  const ok = answers.filter((a) => a.status === 200);
  return {
    ok: ok.length,
    okInTime: ok.filter((a) => a.ms <= 10_000).length,
    refused: answers.filter((a) => a.status === 503).length,
    timedOut: answers.filter((a) => a.status === 504).length,
    refusalP50Ms: percentile(refusals, 50),
    refusalP90Ms: percentile(refusals, 90),
  };
}

interface BuildResult {
  readonly label: string;
  readonly sequences: SequenceResult[];
  readonly cold: BurstResult;
  readonly warm: BurstResult;
}

async function measure(label: string, checkout: string | undefined): Promise<BuildResult> {
  const start = (env: Record<string, string>) =>
    startService(
      label,
      { CLUSTER_PROCESSES: '1', POOL_THREADS: String(THREADS), LOG_LEVEL: 'warn', ...env },
      checkout,
    );
  log(`${label}: cold burst`);
  const fresh = await start({ TASK_TIMEOUT_MS: String(BURST.deadlineMs) });
  const cold = await burst(fresh);
  log(`  cold: ${JSON.stringify(cold)}`);
  const warm = await burst(fresh);
  log(`  warm: ${JSON.stringify(warm)}`);
  await fresh.stop();

  log(`${label}: idle sequences of ${REQUESTS} requests`);
  const sequences: SequenceResult[] = [];
  const chosen = Object.entries(await generators()).filter(
    ([task]) => TASKS === undefined || TASKS.includes(task),
  );
  for (const [task, generate] of chosen) {
    // A fresh service per task: what the model learnt of one task says nothing of another.
    const server = await start({ TASK_TIMEOUT_MS: '30000' });
    sequences.push(await idleSequence(server, task, generate));
    await server.stop();
  }
  return { label, sequences, cold, warm };
}

function report(results: readonly BuildResult[], startedAt: Date, load: number[]): string {
  const tasks = results[0]?.sequences.map((sequence) => sequence.task) ?? [];
  const sequenceRows = tasks.map((task) => [
    task,
    ...results.map((result) => {
      const s = result.sequences.find((sequence) => sequence.task === task);
      return s === undefined
        ? '-'
        : `**${s.wronglyRefused}** / ${s.refused} / ${s.ok} / ${s.timedOut}${s.other > 0 ? ` (+${s.other} other)` : ''}`;
    }),
  ]);
  const burstRow = (name: string, pick: (result: BuildResult) => string) => [
    name,
    ...results.map(pick),
  ];
  const burstText = (b: BurstResult) =>
    `${b.ok} / ${b.refused} / ${b.timedOut}; refusals p50 ${fmt(b.refusalP50Ms)} ms, p90 ${fmt(b.refusalP90Ms)} ms`;
  return [
    `# Admission bench, ${startedAt.toISOString().slice(0, 16)}Z`,
    '',
    `${availableParallelism()} cores, load average ${load.map((l) => l.toFixed(2)).join(' ')} at the start; ` +
      `1 process × ${THREADS} threads; \`npm run bench:admission -- --requests=${REQUESTS}\`` +
      (BEFORE === undefined ? '' : ' with `--before`') +
      '.',
    '',
    `## Idle sequences: ${REQUESTS} requests per task, one at a time`,
    '',
    'Wrongly refused (ran in less than 0.8 × the deadline it was refused at, when sent again) / refused / 200 / 504:',
    '',
    markdownTable(['task', ...results.map((result) => result.label)], sequenceRows),
    '',
    ...results.flatMap((result) =>
      result.sequences
        .filter((sequence) => sequence.wrongly.length > 0)
        .map((sequence) => `- ${result.label}, ${sequence.task}: ${sequence.wrongly.join('; ')}`),
    ),
    '',
    `## Bursts: ${BURST.requests} × compute ${BURST.input.iterations / 1e6} M iterations, ${BURST.deadlineMs} ms deadline`,
    '',
    '200 / 503 / 504, and how soon the refusals came:',
    '',
    markdownTable(
      ['burst', ...results.map((result) => result.label)],
      [
        burstRow('cold (fresh service)', (r) => burstText(r.cold)),
        burstRow('warm (the same service, after it)', (r) => burstText(r.warm)),
        burstRow('cold useful throughput / warm (200 within 10 s)', (r) =>
          fmt(r.cold.okInTime / Math.max(1, r.warm.okInTime), 2),
        ),
      ],
    ),
    '',
  ].join('\n');
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  buildIfNeeded(log);
  const startedAt = new Date();
  const load = loadavg();
  const results = [await measure('this build', undefined)];
  if (BEFORE !== undefined) results.push(await measure('before', BEFORE));
  const markdown = report(results, startedAt, load);
  const file = join(
    REPORT_PATHS.resultsDir,
    noteFileName({ date: startedAt.toISOString(), mode: 'admission' }),
  );
  writeFileSync(file, markdown);
  log(`\n${markdown}\nwritten to ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
