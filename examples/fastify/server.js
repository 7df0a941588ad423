'use strict';
// A plain Fastify server that runs CPU-heavy tasks on @corepool/core's pool:
// POST /tasks/:name runs a task, GET /ready says whether the pool can serve.
const Fastify = require('fastify');
const { createPool, CorepoolError } = require('@corepool/core');

/** The core's error codes as HTTP statuses; anything else is a 500. */
const STATUS = {
  VALIDATION_FAILED: 400,
  TASK_NOT_FOUND: 404,
  TASK_CANCELLED: 499, // the client left: nobody reads this answer
  POOL_SATURATED: 503,
  POOL_SHUTTING_DOWN: 503,
  TASK_TIMEOUT: 504,
};

/** The client's own deadline, in ms from now (the header corepool's service reads too). */
const DEADLINE_HEADER = 'x-request-timeout-ms';

function buildServer({ threads = 2, logger = true } = {}) {
  const pool = createPool({ tasks: [require.resolve('./tasks')], threads, taskTimeoutMs: 30_000 });
  const app = Fastify({ logger });

  app.post('/tasks/:name', async (request, reply) => {
    // Cancel the task when the client goes away before its answer: its
    // thread stops at its next throwIfCancelled() and serves someone else.
    const clientGone = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) clientGone.abort();
    });
    const deadlineMs = Number(request.headers[DEADLINE_HEADER]) || undefined;
    const { value, waitMs, runMs } = await pool.run(request.params.name, request.body ?? {}, {
      deadlineMs,
      signal: clientGone.signal,
    });
    return { value, waitMs, runMs };
  });

  // Readiness: a load balancer sends work only while the pool can take it.
  app.get('/ready', (_request, reply) => {
    const stats = pool.stats();
    return reply.code(stats.ready ? 200 : 503).send(stats);
  });

  app.setErrorHandler((error, _request, reply) => {
    if (!(error instanceof CorepoolError)) return reply.send(error);
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', error.retryAfterSeconds);
    return reply
      .code(STATUS[error.code] ?? 500)
      .send({ code: error.code, message: error.message, facts: error.facts });
  });

  // The threads start before the server listens: the first request finds them warm.
  app.addHook('onReady', () => pool.start());
  // On close, Fastify stops listening and waits for open connections: an
  // answer given meanwhile closes its keep-alive connection, so none is left
  // waiting. Then the pool drains what it accepted and ends its threads.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  app.addHook('onClose', () => pool.close());
  return { app, pool };
}

async function main() {
  const { app } = buildServer();
  await app.listen({
    port: Number(process.env.PORT ?? 3000),
    host: process.env.HOST ?? '127.0.0.1',
  });
  process.once('SIGTERM', () => {
    app.close().then(
      () => process.exit(0),
      (error) => {
        app.log.error(error);
        process.exit(1);
      },
    );
  });
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

module.exports = { buildServer };
