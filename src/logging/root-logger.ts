import pino, { type Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { bufferedStdout } from './buffered-stdout';

/**
 * The process's one pino logger. Fastify derives each request's logger from
 * it (a child carrying `reqId`) and Nest logs through it (nestjs-pino), so
 * every line has the same shape and goes to the same place: JSON lines on
 * stdout (in writes of up to 4 KiB, `buffered-stdout.ts`), or
 * readable lines on a developer's terminal.
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
  return pino({ level: log.level }, bufferedStdout());
}
