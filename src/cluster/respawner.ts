import { ExitCode } from '../lifecycle/exit-codes';
import { ACCEPT_MESSAGE } from './cluster-messages';
import type { ClusterProcesses } from './cluster-processes';
import type { PrimaryLog } from './primary-log';
import { describeEnding, type PrimaryStop, type ProcessEnding } from './primary-stop';
import type { Rebalancer } from './rebalancer';
import { MAKE_ROOM_MAX_MS } from './rebalancer';
import type { RespawnPolicy } from './respawn-policy';

/**
 * Replaces a process that died, after the policy's backoff; a crash loop
 * stops the primary instead.
 */
export class Respawner {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly processes: ClusterProcesses,
    private readonly rebalancer: Rebalancer,
    private readonly stop: PrimaryStop,
    private readonly policy: RespawnPolicy,
    private readonly log: PrimaryLog,
  ) {}

  /** A process died unexpectedly (it was already forgotten). */
  processDied(ending: ProcessEnding): void {
    const { pid, code, signal } = ending;
    const decision = this.policy.recordDeath(Date.now());
    if (decision.action === 'give-up') {
      this.log(
        'error',
        `crash loop: ${decision.recentDeaths} processes died within the respawn window; giving up`,
        { process: pid, code, signal },
      );
      this.stop.stop('crash loop', ExitCode.CRASH_LOOP);
      return;
    }
    this.log(
      'warn',
      `process ${pid} died (${describeEnding(ending)}); starting a new one in ${decision.delayMs} ms`,
      { process: pid, code, signal },
    );
    // A process holding its listener counted on this one to accept: none may be left accepting.
    this.processes.sendToAll(ACCEPT_MESSAGE);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stop.isStopping) this.replace();
    }, decision.delayMs);
    this.timers.add(timer);
  }

  /** No replacement is started any more (the primary stops). */
  cancel(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private replace(): void {
    const replacement = this.processes.fork();
    // The survivors took the dead process's connections: each moves its share to the
    // replacement, which would otherwise wait for the connection age bound (and lose the race).
    void replacement.ready.then((ready) => {
      const serving = this.processes.serving().length;
      if (ready && !this.stop.isStopping) {
        this.rebalancer.makeRoomFor(replacement, MAKE_ROOM_MAX_MS, 1 / serving);
      }
    });
  }
}
