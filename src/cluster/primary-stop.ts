import { ExitCode } from '../lifecycle/exit-codes';
import type { ClusterProcesses } from './cluster-processes';
import type { PrimaryLog } from './primary-log';

/** Extra time the primary grants its processes beyond their own budget before killing them. */
const STOP_MARGIN_MS = 5_000;

/** How a process ended, as `cluster`'s `exit` event tells it. */
export interface ProcessEnding {
  readonly pid: number | undefined;
  readonly code: number | null;
  readonly signal: string | null;
}

/** How an ending reads in a log line: the signal, else the exit code. */
export const describeEnding = ({ code, signal }: ProcessEnding): string => signal ?? `code ${code}`;

/**
 * The primary's shutdown: SIGTERM to every process, SIGKILL to those still
 * running past their drain budget, and the primary's exit once all are gone,
 * with a code that reports the worst ending.
 */
export class PrimaryStop {
  private stopping = false;
  private exitCode: ExitCode = ExitCode.OK;

  constructor(
    private readonly processes: ClusterProcesses,
    /** The processes' own drain budget: `SHUTDOWN_DELAY_MS` + `SHUTDOWN_TIMEOUT_MS`. */
    private readonly drainMs: number,
    private readonly log: PrimaryLog,
    /** Called once, as the stop begins: nothing may be started any more. */
    private readonly onStop: () => void,
  ) {}

  get isStopping(): boolean {
    return this.stopping;
  }

  stop(reason: string, code: ExitCode): void {
    if (this.stopping) return;
    this.stopping = true;
    this.exitCode = code;
    this.onStop();
    this.log('info', `${reason}: stopping ${this.processes.size} processes`);
    this.processes.signalAll('SIGTERM');
    const limitMs = this.drainMs + STOP_MARGIN_MS;
    setTimeout(() => {
      this.log('error', `processes still running ${limitMs} ms after SIGTERM; killing them`);
      this.processes.signalAll('SIGKILL');
      this.exitCode = ExitCode.SHUTDOWN_TIMEOUT;
    }, limitMs).unref();
    this.finishIfDone();
  }

  /** A process exited while stopping (it was already forgotten). */
  processExited(ending: ProcessEnding): void {
    const { pid, code, signal } = ending;
    this.log('info', `process ${pid} exited (${describeEnding(ending)})`, {
      process: pid,
      code,
      signal,
    });
    // The primary's code reports the worst ending: a timeout is named as such. A
    // process our SIGTERM ended by default had not started listening: nothing was lost.
    const clean = code === ExitCode.OK || (code === null && signal === 'SIGTERM');
    if (!clean && this.exitCode === ExitCode.OK) {
      this.exitCode =
        code === ExitCode.SHUTDOWN_TIMEOUT ? ExitCode.SHUTDOWN_TIMEOUT : ExitCode.FAILURE;
    }
    this.finishIfDone();
  }

  private finishIfDone(): void {
    if (this.stopping && this.processes.size === 0) {
      this.log('info', `all processes exited; primary exits with ${this.exitCode}`, {
        exitCode: this.exitCode,
      });
      process.exit(this.exitCode);
    }
  }
}
