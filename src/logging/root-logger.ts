import pino, { type Logger } from 'pino';
import type { AppConfig } from '../config/app-config';

/** Lines are written once this many bytes wait, or on the next flush tick. */
const LOG_BUFFER_BYTES = 4096;
/** The longest a line waits in the buffer before it is written. */
export const LOG_FLUSH_INTERVAL_MS = 100;

/**
 * The process's one pino logger. Fastify derives each request's logger from
 * it (a child carrying `reqId`) and Nest logs through it (nestjs-pino), so
 * every line has the same shape and goes to the same place: JSON lines on
 * stdout, or readable lines on a developer's terminal.
 *
 * Lines are buffered (4 KiB, or 100 ms at most) and written asynchronously,
 * off the event loop: with pino's default, one synchronous `write(2)` per
 * access-log line, a bare Fastify with corepool's access log spent 174–183
 * µs of main-thread CPU per request against 141–163 µs buffered (118–138
 * without the line; docs/adr/0016-a-hot-path-designed-for-cost.md); a slow
 * reader of stdout no longer stalls the event loop either. Pino flushes the
 * buffer synchronously when the process exits, crashes included; only a
 * SIGKILL loses the last 100 ms of lines.
 */
export function createRootLogger(log: AppConfig['log']): Logger {
  if (log.pretty) {
    return pino({
      level: log.level,
      transport: {
        target: 'pino-pretty',
        options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
      },
    });
  }
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES });
  // A quiet process's lines still come out within the interval; unref: it keeps no process alive.
  let open = true;
  destination.once('close', () => (open = false));
  setInterval(() => {
    if (open) destination.flush();
  }, LOG_FLUSH_INTERVAL_MS).unref();
  return pino({ level: log.level }, destination);
}
