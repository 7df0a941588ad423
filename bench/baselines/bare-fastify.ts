/**
 * The light-route ceiling: bare Fastify answering the same `GET /health/live`
 * body, with nothing else — no NestJS, no hooks, no logging.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
// The same body as the service's Terminus answer.
app.get('/health/live', () => ({ status: 'ok', info: {}, error: {}, details: {} }));

process.once('SIGTERM', () => void app.close());

app
  .listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
  .then(() => process.stdout.write('listening\n'))
  .catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
