/**
 * Memory through bursts of big request bodies, and after them, with the
 * service's default settings (on 2 cores: 2 processes of 1 thread):
 *
 * - `burst`: 30 concurrent 64 MiB `hash` uploads;
 * - `rounds`: four rounds of 20 concurrent 64 MiB uploads, one after the other;
 * - `partial`: 20 connections that announce a 60 MiB body, send 40 MiB of it
 *   and stall, until the service answers (408 once the request timeout,
 *   shortened to 10 s here, passes; 503 at once when the body budget is full).
 *
 * - `jobs`: 12 × 16 MiB binary jobs (`POST /api/jobs?task=hash`), 4 at a time,
 *   until all have ended: a variant with `REDIS_URL` puts them on BullMQ, one
 *   without on SQLite (ADR 0053; give each Redis variant its own
 *   `JOBS_QUEUE_PREFIX`);
 * - `json-wide`: 2 concurrent 64 MiB `json-stats` requests of wide records
 *   (20,000 numeric fields each), the costliest admitted mix per byte; run it with a
 *   deployment's settings and its limit (`MEMORY_LIMIT_BYTES`) to see its peak against
 *   that limit (ADR 0044).
 *
 * For each: the RSS of the whole process tree before, at its peak, and 5 s
 * after the last answer, and the liveness probe (a new connection every 20 ms,
 * from a thread of its own) during the burst: p99 and maximum; and the same
 * probe's p99 for 3 s before the burst, on the idle service, which tells what
 * the machine's other load alone costs it.
 *
 *   npx tsx bench/upload-memory.ts [--repeat N] [--scenarios burst,rounds,partial] \
 *     ['label[@checkout]:NAME=value,NAME=value' ...]
 *
 * Each variant is a service run with those settings (and another checkout's
 * build after `@`, e.g. the main branch's built in a copy); the variants run
 * in turns, N times, so that the machine's noise falls on all of them alike.
 * With no variant: this build with its defaults.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { wideRecords } from '../test/support/wide-records';
import { buildIfNeeded } from './lib/build';
import { startService, type Server } from './lib/servers';
import { markdownTable, percentile } from './lib/stats';

const MiB = 1024 * 1024;
const AFTER_MS = 5_000;
const PROBE_EVERY_MS = 20;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

type Scenario = 'burst' | 'rounds' | 'partial' | 'jobs' | 'json-wide';
/** The default run; `jobs` and `json-wide` are asked for by name (`--scenarios jobs`). */
const SCENARIOS: readonly Scenario[] = ['burst', 'rounds', 'partial'];
const JOB_BODY_BYTES = 16 * MiB;
const JOBS = 12;
const JOBS_AT_ONCE = 4;

interface Variant {
  readonly label: string;
  readonly checkout?: string;
  readonly settings: Record<string, string>;
}

interface Outcome {
  readonly answers: string;
  readonly beforeMiB: number;
  readonly peakMiB: number;
  readonly afterMiB: number;
  readonly liveP99Ms: number;
  readonly liveMaxMs: number;
  /** The same probe for as long before the burst: what the machine alone costs it. */
  readonly idleP99Ms: number;
}

/** Probes `/health/live` from a thread of its own, so that the uploads' writes do not delay it. */
function startProbe(url: string): { stop(): Promise<number[]> } {
  const thread = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const { get } = require('node:http');
    const latencies = [];
    let running = true;
    const probe = () => new Promise((done) => {
      const started = performance.now();
      const finish = () => { latencies.push(performance.now() - started); done(); };
      const req = get(workerData.url + '/health/live', { agent: false, timeout: 5000 }, (res) => {
        res.resume();
        res.on('end', finish);
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', finish);
    });
    (async () => {
      while (running) {
        const next = performance.now() + workerData.everyMs;
        await probe();
        await new Promise((done) => setTimeout(done, Math.max(0, next - performance.now())));
      }
      parentPort.postMessage(latencies);
    })();
    parentPort.on('message', () => { running = false; });
    `,
    { eval: true, workerData: { url, everyMs: PROBE_EVERY_MS } },
  );
  return {
    stop: () =>
      new Promise((done) => {
        thread.once('message', (latencies: number[]) => {
          void thread.terminate();
          done(latencies);
        });
        thread.postMessage('stop');
      }),
  };
}

/** One upload on a connection of its own; resolves with its status (0: the connection failed). */
function upload(url: string, body: Buffer, task = 'hash'): Promise<number> {
  return new Promise((done) => {
    const req = request(
      `${url}/api/tasks/${task}`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/octet-stream', 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      },
    );
    req.on('error', () => done(0));
    req.end(body);
  });
}

/** Announces `totalBytes`, sends `sentBytes` and waits, until the service answers or closes. */
function partialUpload(url: string, totalBytes: number, sentBytes: number): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((done) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    const finish = () => {
      socket.destroy();
      done(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0));
    };
    socket.on('connect', () => {
      socket.write(
        `POST /api/tasks/hash HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/octet-stream\r\ncontent-length: ${totalBytes}\r\n\r\n`,
      );
      const chunk = Buffer.alloc(MiB, 7);
      for (let sent = 0; sent < sentBytes; sent += MiB) socket.write(chunk);
    });
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (answer.includes('\r\n\r\n')) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
}

/** One binary job on a connection of its own; its status once it has ended (0: refused or lost). */
async function jobRoundTrip(url: string, body: Buffer): Promise<number> {
  const submitted = await new Promise<{ status: number; text: string }>((done) => {
    const req = request(
      `${url}/api/jobs?task=hash`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/octet-stream', 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', () => done({ status: 0, text: '' }));
    req.end(body);
  });
  if (submitted.status !== 202) return submitted.status;
  const { id } = JSON.parse(submitted.text) as { id: string };
  for (const until = Date.now() + 120_000; Date.now() < until; await sleep(100)) {
    const job = (await (await fetch(`${url}/api/jobs/${id}`)).json()) as { status: string };
    if (job.status === 'succeeded') return 200;
    if (job.status !== 'queued' && job.status !== 'running') return 500;
  }
  return 0;
}

const tally = (statuses: readonly number[]) => {
  const counts = new Map<number, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${count}× ${status === 0 ? 'failed' : status}`)
    .join(', ');
};

async function runScenario(service: Server, scenario: Scenario): Promise<string> {
  switch (scenario) {
    case 'burst': {
      const body = Buffer.alloc(64 * MiB, 7);
      return tally(await Promise.all(Array.from({ length: 30 }, () => upload(service.url, body))));
    }
    case 'rounds': {
      const body = Buffer.alloc(64 * MiB, 7);
      const statuses: number[] = [];
      for (let round = 0; round < 4; round++) {
        statuses.push(
          ...(await Promise.all(Array.from({ length: 20 }, () => upload(service.url, body)))),
        );
      }
      return tally(statuses);
    }
    case 'jobs': {
      const body = Buffer.alloc(JOB_BODY_BYTES, 7);
      const statuses: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: JOBS_AT_ONCE }, async () => {
          while (next < JOBS) {
            next += 1;
            statuses.push(await jobRoundTrip(service.url, body));
          }
        }),
      );
      return tally(statuses);
    }
    case 'json-wide': {
      const body = wideRecords(64 * MiB);
      return tally(await Promise.all([1, 2].map(() => upload(service.url, body, 'json-stats'))));
    }
    case 'partial':
      return tally(
        await Promise.all(
          Array.from({ length: 20 }, () => partialUpload(service.url, 60 * MiB, 40 * MiB)),
        ),
      );
  }
}

async function measure(variant: Variant, scenario: Scenario): Promise<Outcome> {
  const service = await startService(
    variant.label,
    {
      LOG_LEVEL: 'warn',
      // The partial bodies' 408 comes after this; the default (60 s) only makes the run longer.
      ...(scenario === 'partial' ? { HTTP_REQUEST_TIMEOUT_MS: '10000' } : {}),
      ...variant.settings,
    },
    variant.checkout,
  );
  try {
    // Let the processes settle after their start, probing them meanwhile.
    const idle = startProbe(service.url);
    await sleep(3_000);
    const idleLatencies = (await idle.stop()).sort((a, b) => a - b);
    const beforeMiB = service.rssMiB();
    let peakMiB = beforeMiB;
    const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, service.rssMiB())), 25);
    const probe = startProbe(service.url);
    const answers = await runScenario(service, scenario);
    const latencies = (await probe.stop()).sort((a, b) => a - b);
    await sleep(AFTER_MS);
    clearInterval(sampler);
    return {
      answers,
      beforeMiB,
      peakMiB,
      afterMiB: service.rssMiB(),
      liveP99Ms: percentile(latencies, 99),
      liveMaxMs: latencies.at(-1) ?? 0,
      idleP99Ms: percentile(idleLatencies, 99),
    };
  } finally {
    await service.stop();
  }
}

function parseVariant(argument: string): Variant {
  const colon = argument.indexOf(':');
  const name = colon < 0 ? argument : argument.slice(0, colon);
  const settings = colon < 0 ? '' : argument.slice(colon + 1);
  const [label = name, checkout] = name.split('@');
  const pairs = settings
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)];
    });
  return { label, checkout, settings: Object.fromEntries(pairs) as Record<string, string> };
}

function parseArgs(argv: readonly string[]) {
  let repeat = 1;
  let scenarios = SCENARIOS;
  const variants: Variant[] = [];
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i] ?? '';
    if (argument === '--repeat') repeat = Number(argv[++i]);
    else if (argument === '--scenarios') {
      scenarios = (argv[++i] ?? '').split(',') as Scenario[];
    } else variants.push(parseVariant(argument));
  }
  return {
    repeat,
    scenarios,
    variants: variants.length > 0 ? variants : [{ label: 'defaults', settings: {} }],
  };
}

async function main(): Promise<void> {
  buildIfNeeded((line) => process.stdout.write(`${line}\n`));
  const { repeat, scenarios, variants } = parseArgs(process.argv.slice(2));
  const load = loadavg().map((value) => value.toFixed(2));
  const mib = (value: number) => value.toFixed(0);
  const ms = (value: number) => value.toFixed(0);
  const rows: string[][] = [];
  for (const scenario of scenarios) {
    for (let run = 1; run <= repeat; run++) {
      for (const variant of variants) {
        const outcome = await measure(variant, scenario);
        const row = [
          scenario,
          String(run),
          variant.label,
          outcome.answers,
          mib(outcome.beforeMiB),
          mib(outcome.peakMiB),
          mib(outcome.afterMiB),
          ms(outcome.liveP99Ms),
          ms(outcome.liveMaxMs),
          ms(outcome.idleP99Ms),
        ];
        process.stderr.write(`${row.join(' | ')}\n`);
        rows.push(row);
      }
    }
  }
  process.stdout.write(
    [
      `# Memory through bursts of big bodies, ${new Date().toISOString()} (load ${load.join(' ')})`,
      '',
      markdownTable(
        [
          'scenario',
          'run',
          'service',
          'answers',
          'RSS before (MiB)',
          'peak',
          `+${AFTER_MS / 1000} s`,
          'live p99 (ms)',
          'live max (ms)',
          'idle live p99 (ms)',
        ],
        rows,
      ),
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
