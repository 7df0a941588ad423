/**
 * A light open-loop HTTP/1.1 load generator, meant to run in a process of its
 * own (ADR 0024): raw keep-alive sockets, one prebuilt request, responses
 * parsed by `content-length`, latencies in a preallocated array. It allocates
 * next to nothing per request, so its own event loop and GC do not show up in
 * the latencies it reports, unlike `fetch` in the process that also
 * orchestrates the bench.
 *
 * Each request has a due time (`i / rate` seconds after the start); its
 * latency counts from that due time, so a request that had to wait for a free
 * connection, or for the generator's own loop, is counted as late (no
 * coordinated omission). The time from the actual write is reported beside.
 *
 *   node --require tsx/cjs bench/lib/open-loop-client.ts '<json options>'
 *
 * Prints one JSON line (`OpenLoopResult`) on stdout when done.
 */
import { connect, type Socket } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

export interface OpenLoopOptions {
  readonly port: number;
  readonly host?: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: string;
  readonly rate: number;
  readonly seconds: number;
  /** Answered with this status counts as ok. */
  readonly expect: number;
  /** Sockets opened at most; a request due with none free waits for one. */
  readonly connections?: number;
  /** Milliseconds to wait before the first request. */
  readonly delayMs?: number;
}

export interface OpenLoopResult {
  readonly sent: number;
  readonly failed: number;
  /** Milliseconds from the due time to the full answer: p50, p90, p99, p999, max. */
  readonly fromDue: readonly number[];
  /** Milliseconds from the request's write to the full answer. */
  readonly fromWrite: readonly number[];
  /** The generator's own event-loop delay, ms: p99 and max. */
  readonly ownLoop: readonly number[];
}

interface Connection {
  readonly socket: Socket;
  busy: boolean;
  due: number;
  written: number;
  buffered: string;
}

const PERCENTILES = [50, 90, 99, 99.9, 100];

function percentiles(values: Float64Array): number[] {
  const sorted = values.slice().sort();
  return PERCENTILES.map((p) => {
    const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
    return Math.round((sorted[rank - 1] ?? NaN) * 1000) / 1000;
  });
}

export function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { host = '127.0.0.1', rate, seconds, connections = 64 } = options;
  const body = options.body ?? '';
  const request = Buffer.from(
    `${options.method} ${options.path} HTTP/1.1\r\nhost: ${host}:${options.port}\r\n` +
      (options.method === 'POST'
        ? `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`
        : '') +
      `\r\n${body}`,
    'latin1',
  );
  const total = Math.round(rate * seconds);
  const fromDue = new Float64Array(total);
  const fromWrite = new Float64Array(total);
  let done = 0;
  let failed = 0;
  let next = 0;
  const idle: Connection[] = [];
  const all: Connection[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let pumpAfterAnswer = () => {};

  return new Promise((resolve) => {
    const finish = () => {
      loop.disable();
      for (const connection of all) connection.socket.destroy();
      resolve({
        sent: total,
        failed,
        fromDue: percentiles(fromDue),
        fromWrite: percentiles(fromWrite),
        ownLoop: [loop.percentile(99) / 1e6, loop.max / 1e6].map(
          (ms) => Math.round(ms * 100) / 100,
        ),
      });
    };
    const record = (connection: Connection, ok: boolean, reusable = true) => {
      const now = performance.now();
      fromDue[done] = now - connection.due;
      fromWrite[done] = now - connection.written;
      done += 1;
      if (!ok) failed += 1;
      connection.busy = false;
      connection.buffered = '';
      if (!reusable) {
        // The service closes a connection now and then (`Connection: close`: its age, a 503; ADR 0010).
        connection.socket.destroy();
        all.splice(all.indexOf(connection), 1);
      }
      if (done === total) finish();
      else {
        if (reusable) idle.push(connection);
        pumpAfterAnswer();
      }
    };
    const open = (): Connection => {
      const socket = connect({ host, port: options.port, noDelay: true });
      socket.setEncoding('latin1');
      const connection: Connection = { socket, busy: false, due: 0, written: 0, buffered: '' };
      socket.on('data', (chunk: string) => {
        connection.buffered += chunk;
        const end = connection.buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = connection.buffered.slice(0, end);
        const length = /content-length: *(\d+)/i.exec(head);
        if (connection.buffered.length < end + 4 + Number(length?.[1] ?? 0)) return;
        record(
          connection,
          connection.buffered.startsWith(`HTTP/1.1 ${options.expect}`),
          !/^connection: *close/im.test(head),
        );
      });
      socket.on('close', () => {
        if (!all.includes(connection)) return;
        const index = idle.indexOf(connection);
        if (index >= 0) idle.splice(index, 1);
        if (connection.busy) record(connection, false, false);
        else all.splice(all.indexOf(connection), 1);
      });
      socket.on('error', () => undefined); // 'close' follows
      all.push(connection);
      return connection;
    };
    const started = performance.now() + (options.delayMs ?? 0);
    let timer: NodeJS.Timeout | undefined;
    /** Sends every request due by now that a connection can take. */
    const pump = () => {
      const now = performance.now();
      while (next < total && started + (next * 1000) / rate <= now) {
        // The longest idle first: requests rotate over the open connections, which the kernel
        // spread over the cluster's processes, as many clients' would (the last used first put
        // nearly all on one or two connections, and one process did 3x the other's work).
        const connection = idle.shift() ?? (all.length < connections ? open() : undefined);
        if (connection === undefined) return; // waits for an answer; counted from its due time
        connection.busy = true;
        connection.due = started + (next * 1000) / rate;
        connection.written = performance.now();
        connection.socket.write(request);
        next += 1;
      }
    };
    const tick = () => {
      timer = undefined;
      pump();
      if (next < total) {
        const wait = started + (next * 1000) / rate - performance.now();
        timer = setTimeout(tick, Math.max(0, wait));
      }
    };
    pumpAfterAnswer = () => {
      pump();
      if (timer === undefined && next < total) tick();
    };
    loop.enable();
    // Sockets opened before the clock starts, as a keep-alive client would have them.
    for (let i = 0; i < Math.min(8, connections); i++) idle.push(open());
    timer = setTimeout(tick, Math.max(0, started - performance.now()));
  });
}

if (require.main === module) {
  const options = JSON.parse(process.argv[2] ?? '{}') as OpenLoopOptions;
  runOpenLoop(options)
    .then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    });
}
