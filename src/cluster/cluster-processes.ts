import cluster, { type Worker } from 'node:cluster';
import { isReadyMessage, loadIn, type LoadReport } from './cluster-messages';
import type { PrimaryLog } from './primary-log';

/** One HTTP process the primary forked. */
export interface ClusterProcess {
  /** Node's handle on it (`cluster.Worker`: Node's word for a cluster process). */
  readonly handle: Worker;
  /** Resolves true when the process reports ready, false if it exits first. */
  readonly ready: Promise<boolean>;
  readonly exited: Promise<void>;
  /** Reported ready: it accepts connections and serves. */
  serving: boolean;
  /** Being replaced (rolling reload): its exit is expected, not a death. */
  retiring: boolean;
}

/** A process that went away meanwhile needs no message; the callback keeps a failed send quiet. */
export const ignore = () => undefined;

/** The primary's HTTP processes: forks them, follows their readiness and load reports. */
export class ClusterProcesses {
  private readonly byId = new Map<number, ClusterProcess>();

  constructor(
    /** glibc reads its malloc settings as a process starts: they go into each fork's environment. */
    private readonly env: Readonly<Record<string, string>>,
    private readonly onLoad: (id: number, report: LoadReport) => void,
    private readonly log: PrimaryLog,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  fork(): ClusterProcess {
    const handle = cluster.fork(this.env);
    const pid = handle.process.pid;
    const exited = new Promise<void>((done) => handle.once('exit', () => done()));
    // Only our own message type is looked at; anything else on the channel is left alone.
    const ready = new Promise<boolean>((done) => {
      const onMessage = (message: unknown) => {
        if (!isReadyMessage(message)) return;
        handle.off('message', onMessage);
        this.log('info', `process ${pid} ready`, { process: pid });
        forked.serving = true;
        done(true);
      };
      handle.on('message', onMessage);
      void exited.then(() => done(false));
    });
    handle.on('message', (message: unknown) => {
      const load = loadIn(message);
      if (load !== undefined) this.onLoad(handle.id, load);
    });
    const forked: ClusterProcess = { handle, ready, exited, serving: false, retiring: false };
    this.byId.set(handle.id, forked);
    this.log('info', `process ${pid} started`, { process: pid });
    return forked;
  }

  get(id: number): ClusterProcess | undefined {
    return this.byId.get(id);
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  /** Forgets a process that exited; undefined if it was not ours. */
  remove(id: number): ClusterProcess | undefined {
    const gone = this.byId.get(id);
    this.byId.delete(id);
    return gone;
  }

  all(): ClusterProcess[] {
    return [...this.byId.values()];
  }

  /** Ready and not being replaced: the processes that take their share of connections. */
  serving(): ClusterProcess[] {
    return this.all().filter((member) => member.serving && !member.retiring);
  }

  /** Sends to every process still connected. */
  sendToAll(message: object): void {
    for (const { handle } of this.byId.values()) {
      if (handle.isConnected()) handle.send(message, ignore);
    }
  }

  signalAll(signal: NodeJS.Signals): void {
    for (const { handle } of this.byId.values()) handle.process.kill(signal);
  }
}
