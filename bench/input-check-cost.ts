/**
 * What a hostile JSON body costs the event loop (issue 15; ADR 0009).
 *
 * 1. In process, for each hostile shape at the JSON body limit (1 MiB): the
 *    time of Fastify's JSON parser (the one the service uses) and of the input
 *    check (`validateInput`), median of RUNS: what such a body would cost
 *    without the node cap (BODY_MAX_JSON_NODES) that now refuses it unparsed.
 * 2. Over real HTTP, the built service (dist/, in this process, real threads)
 *    answers each shape while `monitorEventLoopDelay` records the longest block
 *    of its event loop; the client runs in a worker thread, so its own work on
 *    the bodies is not counted.
 * 3. The check's cost per 100 KiB of unknown keys, from bodies of 100 KiB to 1 MiB.
 * 4. The options that keep JSON.parse off the event loop, for the same bodies: what the
 *    event loop would still pay to forward the bytes to a thread (UTF-8 check + postMessage),
 *    and the byte scan that counts strings, arrays and objects before parsing (to refuse a
 *    body of too many unparsed: what the service does now).
 *
 *   npx tsx bench/input-check-cost.ts      # RUNS=5 by default
 *
 * The numbers depend on the machine and on what else runs on it.
 */
import { isUtf8 } from 'node:buffer';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { MessageChannel, Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { validateInput } from '../src/common/validation';
import { hasMoreNodesThan } from '../src/http/json-node-count';
import { submitJobInput } from '../src/jobs/dto/submit-job.dto';
import type { InputSchema } from '../src/tasks/input-schema';
import { factorialInput } from '../src/tasks/factorial.task';
import { matrixMultiplyInput } from '../src/tasks/matrix-multiply.task';
import { buildIfNeeded } from './lib/build';
import { ROOT } from './lib/servers';
import { percentile } from './lib/stats';

const RUNS = Number(process.env.RUNS ?? 5);
const LIMIT = 1_048_576;

/** `{"k0":0,"k1":0,…}` as large as fits in `bytes` (without the braces). */
function manyKeys(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const part = `"k${i}":0`;
    parts.push(part);
    size += part.length + 1;
  }
  return parts.join(',');
}

/** `"0","1",…` in base 36, as many as fit in `bytes`. */
function distinctStrings(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const part = `"${i.toString(36)}"`;
    parts.push(part);
    size += part.length + 1;
  }
  return parts.join(',');
}

interface Shape {
  readonly name: string;
  readonly path: string;
  readonly schema: InputSchema;
  /** The part of the body the task's input check sees (for the in-process part). */
  readonly checked: (parsed: Record<string, unknown>) => unknown;
  readonly body: string;
}

function shapes(limit: number): Shape[] {
  const room = limit - 64;
  // Two square matrices of "0.5," entries (4 bytes each, plus brackets) fill the limit.
  const squareSide = Math.floor(Math.sqrt(room / 8.1));
  const row = `[${Array.from({ length: squareSide }, () => '0.5').join(',')}]`;
  const matrix = `[${Array.from({ length: squareSide }, () => row).join(',')}]`;
  const all: Shape[] = [
    {
      name: 'unknown keys, top level',
      path: '/api/tasks/factorial',
      schema: factorialInput,
      checked: (parsed) => parsed,
      body: `{"n":1,${manyKeys(room)}}`,
    },
    {
      name: 'unknown keys, nested under an unknown key',
      path: '/api/tasks/factorial',
      schema: factorialInput,
      checked: (parsed) => parsed,
      body: `{"n":1,"nested":{${manyKeys(room)}}}`,
    },
    {
      name: 'unknown keys in a job input',
      path: '/api/jobs',
      schema: factorialInput,
      checked: (parsed) => parsed.input,
      body: `{"task":"factorial","input":{"n":1,${manyKeys(room)}}}`,
    },
    {
      name: 'unknown keys inside matrix rows',
      path: '/api/tasks/matrix-multiply',
      schema: matrixMultiplyInput,
      checked: (parsed) => parsed,
      body: `{"a":[{${manyKeys(room / 2)}},{${manyKeys(room / 2)}}],"b":[[1]]}`,
    },
    {
      name: 'empty arrays, no keys',
      path: '/api/tasks/factorial',
      schema: factorialInput,
      checked: (parsed) => parsed,
      body: `[${Array<string>(Math.floor(room / 3))
        .fill('[]')
        .join(',')}]`,
    },
    {
      name: 'distinct short strings',
      path: '/api/tasks/factorial',
      schema: factorialInput,
      checked: (parsed) => parsed,
      body: `{"n":1,"s":[${distinctStrings(room - 16)}]}`,
    },
    {
      name: 'one key of 1 MiB',
      path: '/api/tasks/factorial',
      schema: factorialInput,
      checked: (parsed) => parsed,
      body: `{"n":1,"${'k'.repeat(room)}":0}`,
    },
    {
      name: `valid ${squareSide}x${squareSide} matrix (checked, then sent to a thread)`,
      path: '/api/tasks/matrix-multiply',
      schema: matrixMultiplyInput,
      checked: (parsed) => parsed,
      body: `{"output":"checksum","a":${matrix},"b":${matrix}}`,
    },
  ];
  return all.filter((shape) => Buffer.byteLength(shape.body) <= limit);
}

/** Fastify's own JSON parser, configured as the service configures it. */
function fastifyJsonParser(): (body: Buffer) => unknown {
  const parse = Fastify().getDefaultJsonParser('error', 'error');
  return (body) => {
    let result: unknown;
    let failure: unknown;
    void parse({} as never, body as unknown as string, (error, value) => {
      failure = error;
      result = value;
    });
    if (failure) throw failure as Error;
    return result;
  };
}

function timeMs(work: () => void): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

function checkQuietly(schema: InputSchema, value: unknown): void {
  try {
    validateInput(schema, value);
  } catch {
    // Hostile shapes are refused: the refusal is what is timed.
  }
}

function inProcess(): void {
  const parse = fastifyJsonParser();
  console.log(
    `\n1. In process, at the ${LIMIT}-byte body limit, without the node cap (median of ${RUNS}), ms`,
  );
  console.log('| shape | bytes | parse | check | parse + check |');
  console.log('|---|---:|---:|---:|---:|');
  for (const shape of shapes(LIMIT)) {
    const bytes = Buffer.from(shape.body);
    const parses: number[] = [];
    const checks: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      let parsed: Record<string, unknown> = {};
      parses.push(timeMs(() => (parsed = parse(bytes) as Record<string, unknown>)));
      const schema = shape.path === '/api/jobs' ? submitJobInput : shape.schema;
      checks.push(
        timeMs(() => {
          checkQuietly(schema, parsed);
          if (shape.path === '/api/jobs') checkQuietly(shape.schema, shape.checked(parsed));
        }),
      );
    }
    const [p, c] = [median(parses), median(checks)];
    console.log(
      `| ${shape.name} | ${bytes.length} | ${p.toFixed(2)} | ${c.toFixed(2)} | ${(p + c).toFixed(2)} |`,
    );
  }
}

function perHundredKiB(): void {
  console.log('\n3. The check alone per 100 KiB of unknown top-level keys (median), ms');
  console.log('| body | keys | check | per 100 KiB |');
  console.log('|---:|---:|---:|---:|');
  const parse = fastifyJsonParser();
  for (const kib of [100, 250, 500, 1000]) {
    const body = Buffer.from(`{"n":1,${manyKeys(kib * 1024 - 16)}}`);
    const parsed = parse(body) as Record<string, unknown>;
    const keys = Object.keys(parsed).length;
    const times = Array.from({ length: RUNS }, () =>
      timeMs(() => checkQuietly(factorialInput, parsed)),
    );
    const ms = median(times);
    console.log(`| ${kib} KiB | ${keys} | ${ms.toFixed(2)} | ${((ms * 100) / kib).toFixed(3)} |`);
  }
}

/** A client on its own thread: posts what it is told and answers with the status. */
const CLIENT = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', async ({ url, body }) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await response.text();
  parentPort.postMessage({ status: response.status, bytes: text.length });
});
`;

/** The built application in this process (Nest's injection needs the compiler's decorator metadata). */
async function startBuiltApp(): Promise<{ url: string; close(): Promise<void> }> {
  buildIfNeeded((line) => console.error(line));
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createApp } = require(`${ROOT}/dist/create-app`) as typeof import('../src/create-app');
  const { loadConfig } = require(
    `${ROOT}/dist/config/load-config`,
  ) as typeof import('../src/config/load-config');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const config = loadConfig(
    { LOG_LEVEL: 'silent', CLUSTER_WORKERS: '1', BODY_LIMIT_BYTES: String(LIMIT) },
    { cores: 2, stdoutIsTty: false, cwd: ROOT },
  );
  const app = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

async function overHttp(): Promise<void> {
  const service = await startBuiltApp();
  const client = new Worker(CLIENT, { eval: true });
  const send = (path: string, body: string) =>
    new Promise<{ status: number; bytes: number }>((resolve) => {
      client.once('message', resolve);
      client.postMessage({ url: `${service.url}${path}`, body });
    });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  try {
    console.log(
      `\n2. Over HTTP, the service as configured (node cap included): longest event-loop block while answering (median of ${RUNS}), ms`,
    );
    console.log('| shape | status | answer bytes | longest block |');
    console.log('|---|---:|---:|---:|');
    for (const shape of shapes(LIMIT)) {
      const blocks: number[] = [];
      let answer = { status: 0, bytes: 0 };
      for (let run = 0; run < RUNS; run++) {
        delay.reset();
        answer = await send(shape.path, shape.body);
        blocks.push(delay.max / 1e6);
      }
      console.log(
        `| ${shape.name} | ${answer.status} | ${answer.bytes} | ${median(blocks).toFixed(1)} |`,
      );
    }
  } finally {
    delay.disable();
    await client.terminate();
    await service.close();
  }
}

async function alternatives(): Promise<void> {
  console.log(`\n4. Off the event loop instead (median of ${RUNS}), ms`);
  console.log('| shape | parse + check | forward: isUtf8 + postMessage | node scan (whole body) |');
  console.log('|---|---:|---:|---:|');
  const parse = fastifyJsonParser();
  const { port1, port2 } = new MessageChannel();
  port2.on('message', () => undefined);
  for (const shape of shapes(LIMIT)) {
    const bytes = Buffer.from(shape.body);
    const today: number[] = [];
    const forward: number[] = [];
    const scan: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      today.push(timeMs(() => checkQuietly(shape.schema, parse(bytes))));
      forward.push(
        timeMs(() => {
          if (isUtf8(bytes)) port1.postMessage(bytes);
        }),
      );
      // An unreachable limit: the whole body is scanned, the worst case of the scan.
      scan.push(timeMs(() => hasMoreNodesThan(bytes, Infinity)));
      await new Promise((done) => setImmediate(done));
    }
    console.log(
      `| ${shape.name} | ${median(today).toFixed(2)} | ${median(forward).toFixed(2)} | ${median(scan).toFixed(2)} |`,
    );
  }
  port1.close();
}

async function main(): Promise<void> {
  inProcess();
  await overHttp();
  perHundredKiB();
  await alternatives();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
