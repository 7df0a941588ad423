import type { ClusterProcesses } from './cluster-processes';
import type { PrimaryLog } from './primary-log';
import type { PrimaryStop } from './primary-stop';
import { MAKE_ROOM_MAX_MS, type Rebalancer } from './rebalancer';

/** A new process that has not said it is ready by then is treated as failed. */
const START_TIMEOUT_MS = 60_000;

/**
 * SIGHUP: every process is replaced, one at a time: start its replacement,
 * wait until it is ready, then drain the old one.
 */
export class RollingReload {
  private reloading = false;

  constructor(
    private readonly processes: ClusterProcesses,
    private readonly rebalancer: Rebalancer,
    private readonly stop: PrimaryStop,
    /** The processes' own drain budget: `SHUTDOWN_DELAY_MS` + `SHUTDOWN_TIMEOUT_MS`. */
    private readonly drainMs: number,
    private readonly log: PrimaryLog,
  ) {}

  get isRunning(): boolean {
    return this.reloading;
  }

  async run(): Promise<void> {
    if (this.stop.isStopping || this.reloading) {
      this.log('warn', 'SIGHUP ignored: a reload or shutdown is already running');
      return;
    }
    this.reloading = true;
    const current = this.processes.all().filter((member) => !member.retiring);
    this.log('info', `reload: replacing ${current.length} processes one at a time`);
    let replaced = 0;
    for (const old of current) {
      if (this.stop.isStopping) break;
      if (!this.processes.has(old.handle.id)) continue; // died meanwhile; its respawn is already new
      const next = this.processes.fork();
      const timeout = new Promise<boolean>((done) =>
        setTimeout(() => done(false), START_TIMEOUT_MS).unref(),
      );
      if (!(await Promise.race([next.ready, timeout]))) {
        this.log(
          'error',
          `reload stopped: process ${next.handle.process.pid} did not become ready`,
        );
        break;
      }
      // The old process's connections go to the replacement, not to the other processes
      // (which are as busy as before and would win them); they accept again once it is gone.
      old.retiring = true;
      this.rebalancer.makeRoomFor(next, this.drainMs + MAKE_ROOM_MAX_MS, 0);
      old.handle.process.kill('SIGTERM');
      await old.exited;
      // The clients open new connections as they need them, not as the old ones close:
      // the others keep holding a while after the old process is gone.
      this.rebalancer.makeRoomFor(next, MAKE_ROOM_MAX_MS, 0);
      replaced += 1;
    }
    this.reloading = false;
    this.rebalancer.settle();
    this.log('info', `reload complete: ${replaced} of ${current.length} processes replaced`);
  }
}
