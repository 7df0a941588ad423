import type { LogLevel } from './environment-variables';

/**
 * The typed, resolved and frozen configuration. `auto` values are resolved
 * here, once, so the rest of the code only ever sees numbers.
 */
export abstract class AppConfig {
  abstract readonly http: {
    readonly port: number;
    readonly host: string;
    readonly bodyLimitBytes: number;
    readonly binaryBodyLimitBytes: number;
    /** Time to receive a request's headers (slow headers are cut off with 408). */
    readonly headersTimeoutMs: number;
    /** Time to receive a whole request, body included (slow bodies are cut off with 408). */
    readonly requestTimeoutMs: number;
    /** An idle keep-alive connection is closed after this long. */
    readonly keepAliveTimeoutMs: number;
    /** A socket with no traffic either way for this long is closed; 0 never. */
    readonly connectionTimeoutMs: number;
  };
  abstract readonly cluster: {
    /** HTTP processes; 1 means no primary, no fork. */
    readonly workers: number;
  };
  abstract readonly pool: {
    /** Worker threads in this process; 0 runs tasks inline on the event loop. */
    readonly threads: number;
    readonly maxQueue: number;
    readonly taskTimeoutMs: number;
    readonly maxOldGenerationMb: number | undefined;
    /** Recycle a thread after this many tasks; 0 never does. */
    readonly maxTasksPerThread: number;
    /** Added to the threads' nice value, so the event loop wins the CPU. */
    readonly niceIncrement: number;
    /** Extra task modules (absolute paths) loaded next to the built-in tasks. */
    readonly taskModules: readonly string[];
  };
  abstract readonly readiness: {
    readonly queueHighWater: number;
    readonly maxEventLoopDelayMs: number;
  };
  abstract readonly shutdown: {
    readonly delayMs: number;
    readonly timeoutMs: number;
  };
  abstract readonly log: {
    readonly level: LogLevel;
    /** Human-readable lines: development on a terminal only. */
    readonly pretty: boolean;
  };
  abstract readonly jobs: {
    readonly redisUrl: string | undefined;
  };
}
