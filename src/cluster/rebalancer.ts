import { LOAD_REPORT_MS, makeRoomMessage, type LoadReport } from './cluster-messages';
import { ignore, type ClusterProcess, type ClusterProcesses } from './cluster-processes';
import type { PrimaryLog } from './primary-log';
import { ShareWatch } from './share-watch';

/**
 * How long the other processes stop accepting while a new one takes its
 * share (ADR 0018): long enough for a connection asked to move to carry one
 * more request, short enough that a stuck process does not keep them closed.
 * A reload's hold lasts the old process's drain, plus this at most.
 */
export const MAKE_ROOM_MAX_MS = 2_000;
/** After connections were moved, the shares are left to settle this long before the next move. */
const REBALANCE_QUIET_MS = 3_000;

/**
 * Moves connections between the processes: to a new one (ADR 0018), and off
 * one that carries far more than its share (ADR 0027). With the kernel
 * dealing connections, a busy process would otherwise win them back.
 */
export class Rebalancer {
  private readonly shares = new ShareWatch();
  /** No rebalancing before this (Date.now()): a move is under way, or just was. */
  private quietUntil = 0;

  constructor(
    private readonly processes: ClusterProcesses,
    private readonly log: PrimaryLog,
  ) {}

  record(id: number, report: LoadReport): void {
    this.shares.record(id, report);
  }

  forget(id: number): void {
    this.shares.forget(id);
  }

  /** No move for a while: the shares settle first (after a reload, say). */
  settle(): void {
    this.quietUntil = Date.now() + REBALANCE_QUIET_MS;
  }

  /**
   * The serving processes other than `newcomer` stop accepting for a while,
   * and each moves `fraction` of its connections.
   */
  makeRoomFor(newcomer: ClusterProcess, maxMs: number, fraction: number): void {
    for (const { handle } of this.processes.serving()) {
      if (handle === newcomer.handle || !handle.isConnected()) continue;
      handle.send(makeRoomMessage(maxMs, fraction), ignore);
    }
    this.quietUntil = Date.now() + maxMs + REBALANCE_QUIET_MS;
  }

  /** The busiest process makes room when it answers far more than its share (ADR 0018). */
  rebalance(): void {
    if (Date.now() < this.quietUntil) return;
    const serving = this.processes.serving();
    const decision = this.shares.decide(serving.map((member) => member.handle.id));
    const busiest = decision === undefined ? undefined : this.processes.get(decision.id);
    if (decision === undefined || busiest === undefined || !busiest.handle.isConnected()) return;
    const pid = busiest.handle.process.pid;
    const why = decision.reason === 'tasks' ? 'its tasks wait for a thread' : 'it answers more';
    this.log(
      'info',
      `rebalance: process ${pid} carries more than its share (${why}); moving some of its connections`,
      {
        process: pid,
        reason: decision.reason,
        fraction: Number(decision.fraction.toFixed(2)),
      },
    );
    // Tasks: the fraction is of the tasks in flight, so of the requests carrying them.
    const of = decision.reason === 'tasks' ? 'requests' : 'connections';
    busiest.handle.send(makeRoomMessage(MAKE_ROOM_MAX_MS, decision.fraction, of), ignore);
    // Tasks in flight settle as soon as the moved connections carry their next request:
    // one fresh report after the hold tells whether the move was enough (ADR 0027).
    const settleMs = decision.reason === 'tasks' ? LOAD_REPORT_MS : REBALANCE_QUIET_MS;
    this.quietUntil = Date.now() + MAKE_ROOM_MAX_MS + settleMs;
  }
}
