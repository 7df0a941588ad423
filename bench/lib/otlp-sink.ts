/**
 * An OTLP/HTTP endpoint that accepts every export and keeps nothing, for the
 * tracing variants of the bench (the collector's cost is not corepool's):
 *
 *   npx tsx bench/lib/otlp-sink.ts 4318 &
 *   npm run bench -- --hot-path --variant=OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318,…
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 4318);
let spansBytes = 0;
createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (spansBytes += chunk.length));
  request.on('end', () =>
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(),
  );
}).listen(port, '127.0.0.1', () => process.stdout.write(`OTLP sink on ${port}\n`));
process.on('SIGTERM', () => {
  process.stdout.write(`OTLP sink received ${spansBytes} bytes\n`);
  process.exit(0);
});
