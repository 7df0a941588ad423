import type { LogLevel } from '../config/environment-variables';

export type PrimaryLogLevel = 'info' | 'warn' | 'error';

/** One line of the primary's log. */
export type PrimaryLog = (
  level: PrimaryLogLevel,
  msg: string,
  fields?: Record<string, unknown>,
) => void;

/** pino's numbers, so the primary's lines filter and sort with the processes' lines. */
const PINO_LEVELS: Record<LogLevel, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

/** JSON lines like pino's, without loading pino: the primary stays small. */
export function primaryLog(threshold: LogLevel): PrimaryLog {
  return (level, msg, fields = {}) => {
    if (PINO_LEVELS[level] < PINO_LEVELS[threshold]) return;
    const line = { level: PINO_LEVELS[level], time: Date.now(), pid: process.pid };
    process.stdout.write(`${JSON.stringify({ ...line, context: 'Primary', ...fields, msg })}\n`);
  };
}
