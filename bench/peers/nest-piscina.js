'use strict';
/**
 * The peer of the Nest example (examples/nest-app): a minimal Nest
 * application on the same platform (Express) and the same Nest packages
 * (loaded from the example's node_modules, `NEST_APP_DIR`), running the same compiled task
 * on plain Piscina — no validation, deadlines, cancellation, admission,
 * metrics or health checks. `GET /health/live` and `POST /hash` answer as the
 * example's do. Plain JavaScript with the decorators applied by hand, so that
 * it needs no build and resolves Nest exactly where the example does.
 *
 *   NEST_APP_DIR=<the example, installed and built> POOL_THREADS=2 PORT=3000 \
 *     node bench/peers/nest-piscina.js
 */
const { createRequire } = require('node:module');
const { availableParallelism } = require('node:os');
const { join, resolve } = require('node:path');

// The example as installed from the packed packages (bench/library.ts says where).
const APP = resolve(
  process.env.NEST_APP_DIR ?? join(__dirname, '..', '..', 'examples', 'nest-app'),
);
const fromApp = createRequire(join(APP, 'package.json'));
fromApp('reflect-metadata');
const { Body, Controller, Get, HttpCode, Module, Post } = fromApp('@nestjs/common');
const { NestFactory } = fromApp('@nestjs/core');
const { Piscina } = require('piscina');

const threads = Number(process.env.POOL_THREADS ?? availableParallelism());
const pool = new Piscina({
  filename: join(__dirname, 'nest-piscina-thread.js'),
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Infinity,
  workerData: {
    taskFile: join(APP, 'dist', 'tasks', 'hash-chain.task.js'),
    niceIncrement: Number(process.env.WORKER_NICE_INCREMENT ?? 19),
  },
});

// No validation fills in the task's defaults here: the bench sends every field.
class PeerController {
  live() {
    return { status: 'ok' };
  }

  hash(input) {
    return pool.run(input);
  }
}
const method = (name) => Object.getOwnPropertyDescriptor(PeerController.prototype, name);
Controller()(PeerController);
Get('health/live')(PeerController.prototype, 'live', method('live'));
Post('hash')(PeerController.prototype, 'hash', method('hash'));
HttpCode(200)(PeerController.prototype, 'hash', method('hash'));
Body()(PeerController.prototype, 'hash', 0);

class PeerModule {}
Module({ controllers: [PeerController] })(PeerModule);

async function main() {
  // Threads warm before the first request, as the example's are.
  await Promise.all(
    Array.from({ length: threads }, () => pool.run({ rounds: 1, seed: 'corepool' })),
  );
  const app = await NestFactory.create(PeerModule, { logger: false });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
  process.stdout.write(`listening with ${threads} threads\n`);
}

main().catch((error) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
