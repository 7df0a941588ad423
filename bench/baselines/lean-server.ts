/**
 * The lean baseline: bare Fastify + Piscina running corepool's own task code
 * (the built `dist/workers/thread-entry.js`, which runs any registered task by
 * `{ task, input }`), with no NestJS, no validation, no logging, no metrics.
 * It is the ceiling the service can approach, not something to deploy.
 *
 *   POOL_THREADS=2 WORKER_NICE_INCREMENT=19 PORT=3000 \
 *     node --require tsx/cjs bench/baselines/lean-server.ts
 *
 * `POST /api/tasks/hash?clone=1` posts the body to the thread WITHOUT a
 * transfer list (it is copied): the bench compares transfer with clone here,
 * so the service needs no such switch; `GET /bench/handoffs` then tells how
 * long each body took to reach its thread.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import { Piscina } from 'piscina';

interface TaskResponse {
  readonly ok: boolean;
  readonly value?: unknown;
  readonly message?: string;
  /** Epoch ms (sub-ms precision) when the thread started the task. */
  readonly startedAt: number;
  readonly runMs: number;
}

/** Time from posting a body to the thread starting on it, per way of posting (ms). */
const handoffs: Record<'transfer' | 'clone', number[]> = { transfer: [], clone: [] };

const threads = Number(process.env.POOL_THREADS ?? availableParallelism());
// The bench gives the threads the service's default priority, so that only the framework differs.
const niceIncrement = Number(process.env.WORKER_NICE_INCREMENT ?? 0);
const pool = new Piscina<{ task: string; input: object; body?: Uint8Array }, TaskResponse>({
  filename: resolve(__dirname, '..', '..', 'dist', 'workers', 'thread-entry.js'),
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Infinity,
  // As in the service: each thread lowers its priority once its task code is loaded.
  workerData: { taskModules: [], niceIncrement },
  // Plain JavaScript threads, even though this file runs through tsx.
  execArgv: [],
});

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) =>
  done(null, body),
);

// The same body as the service's Terminus answer.
app.get('/health/live', () => ({ status: 'ok', info: {}, error: {}, details: {} }));

app.post<{ Params: { name: string }; Querystring: Record<string, string> & { clone?: string } }>(
  '/api/tasks/:name',
  async (request, reply) => {
    const { name } = request.params;
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    // Binary tasks take their options from the query string, as in the service.
    const { clone, ...query } = request.query;
    const input = body === undefined ? (request.body as object) : query;
    // Transfer only a buffer the body owns whole (a 32 MiB body always does).
    const movable =
      body !== undefined && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    const transferList = movable && clone !== '1' ? [body.buffer as ArrayBuffer] : undefined;
    const postedAt = performance.timeOrigin + performance.now();
    const response = await pool.run({ task: name, input, body }, { transferList });
    if (body !== undefined) {
      handoffs[transferList === undefined ? 'clone' : 'transfer'].push(
        response.startedAt - postedAt,
      );
    }
    if (!response.ok) return reply.code(500).send({ message: response.message });
    return { task: name, result: response.value, timing: { runMs: response.runMs } };
  },
);

// What the bench reads after the hash runs, to show where the end-to-end time goes.
app.get('/bench/handoffs', () => handoffs);

async function main(): Promise<void> {
  // Threads warm before the first request, as in the service.
  await Promise.all(Array.from({ length: threads }, () => pool.run({ task: '', input: {} })));
  await app.listen({
    port: Number(process.env.PORT ?? 3000),
    host: process.env.HOST ?? '127.0.0.1',
  });
  process.stdout.write(`listening with ${threads} threads\n`);
}

process.once('SIGTERM', () => {
  void app.close().then(() => pool.destroy());
});

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
