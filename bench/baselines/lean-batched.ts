/**
 * The lean baseline (lean-server.ts) with tiny tasks sent to the threads in
 * batches: requests wait in one line, and each thread that frees up takes up
 * to BATCH_MAX_TASKS of them in one Piscina task (one postMessage, one
 * wake-up, one answer). It measured what batching could buy on the bare
 * stack (docs/adr/0016-a-hot-path-designed-for-cost.md) before the service
 * batched (docs/adr/0023-small-tasks-go-to-threads-in-batches.md), and stays
 * beside it as the bound of what batching gives. JSON tasks only.
 *
 *   POOL_THREADS=2 BATCH_MAX_TASKS=8 PORT=3000 node --require tsx/cjs bench/baselines/lean-batched.ts
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import Fastify from 'fastify';
import { Piscina } from 'piscina';

interface TaskRequest {
  readonly task: string;
  readonly input: object;
}
interface TaskResponse {
  readonly ok: boolean;
  readonly value?: unknown;
  readonly message?: string;
  readonly runMs: number;
}
interface Waiting {
  readonly request: TaskRequest;
  resolve(response: TaskResponse): void;
  reject(error: unknown): void;
}

const threads = Number(process.env.POOL_THREADS ?? availableParallelism());
const maxBatch = Number(process.env.BATCH_MAX_TASKS ?? 8);
const niceIncrement = Number(process.env.WORKER_NICE_INCREMENT ?? 0);
const pool = new Piscina<TaskRequest[], TaskResponse[]>({
  filename: resolve(__dirname, 'batch-thread.js'),
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Infinity,
  workerData: { taskModules: [], niceIncrement },
  execArgv: [],
});

const line: Waiting[] = [];
let busyThreads = 0;

/** Every free thread takes the oldest waiting tasks, up to a batch. */
function pump(): void {
  while (busyThreads < threads && line.length > 0) {
    const batch = line.splice(0, maxBatch);
    busyThreads += 1;
    pool.run(batch.map((waiting) => waiting.request)).then(
      (responses) => {
        busyThreads -= 1;
        batch.forEach((waiting, index) => waiting.resolve(responses[index] as TaskResponse));
        pump();
      },
      (error: unknown) => {
        busyThreads -= 1;
        for (const waiting of batch) waiting.reject(error);
        pump();
      },
    );
  }
}

function run(request: TaskRequest): Promise<TaskResponse> {
  return new Promise((resolveTask, rejectTask) => {
    line.push({ request, resolve: resolveTask, reject: rejectTask });
    pump();
  });
}

const app = Fastify({ logger: false });
app.get('/health/live', () => ({ status: 'ok', info: {}, error: {}, details: {} }));
app.post<{ Params: { name: string } }>('/api/tasks/:name', async (request, reply) => {
  const { name } = request.params;
  const response = await run({ task: name, input: request.body as object });
  if (!response.ok) return reply.code(500).send({ message: response.message });
  return { task: name, result: response.value, timing: { runMs: response.runMs } };
});

async function main(): Promise<void> {
  await Promise.all(Array.from({ length: threads }, () => pool.run([{ task: '', input: {} }])));
  await app.listen({
    port: Number(process.env.PORT ?? 3000),
    host: process.env.HOST ?? '127.0.0.1',
  });
  process.stdout.write(`listening with ${threads} threads, batches of ${maxBatch}\n`);
}

process.once('SIGTERM', () => {
  void app.close().then(() => pool.destroy());
});

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
