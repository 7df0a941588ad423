import cluster, { type Worker } from 'node:cluster';
import type { AppConfig } from '../config/app-config';
import type { LogLevel } from '../config/environment-variables';
import { ExitCode } from '../lifecycle/exit-codes';
import { startClusterQuotas } from '../auth/quota.primary';
import { startClusterMetrics } from '../metrics/cluster-metrics.primary';
import {
  ACCEPT_MESSAGE,
  isReadyMessage,
  LOAD_REPORT_MS,
  loadIn,
  makeRoomMessage,
} from './cluster-messages';
import { RespawnPolicy } from './respawn-policy';
import { ShareWatch } from './share-watch';
import { httpProcessExecArgv } from './http-process-argv';
import { createStoreIfMissing } from '../jobs/sqlite/sqlite-store-file';

/** A new process that has not said it is ready by then is treated as failed (rolling reload). */
const START_TIMEOUT_MS = 60_000;
/** Extra time the primary grants its processes beyond their own budget before killing them. */
const STOP_MARGIN_MS = 5_000;
/**
 * How long the other processes stop accepting while a new one takes its
 * share (ADR 0018): long enough for a connection asked to move to carry one
 * more request, short enough that a stuck process does not keep them closed.
 * A reload's hold lasts the old process's drain, plus this at most.
 */
const MAKE_ROOM_MAX_MS = 2_000;
/** After connections were moved, the shares are left to settle this long before the next move. */
const REBALANCE_QUIET_MS = 3_000;

interface Member {
  readonly worker: Worker;
  /** Resolves true when the process reports ready, false if it exits first. */
  readonly ready: Promise<boolean>;
  readonly exited: Promise<void>;
  /** Reported ready: it accepts connections and serves. */
  serving: boolean;
  /** Being replaced (rolling reload): its exit is expected, not a death. */
  retiring: boolean;
}

/** A process that went away meanwhile needs no message; the callback keeps a failed send quiet. */
const ignore = () => undefined;

type Level = 'info' | 'warn' | 'error';
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
function logger(threshold: LogLevel) {
  return (level: Level, msg: string, fields: Record<string, unknown> = {}): void => {
    if (PINO_LEVELS[level] < PINO_LEVELS[threshold]) return;
    const line = { level: PINO_LEVELS[level], time: Date.now(), pid: process.pid };
    process.stdout.write(`${JSON.stringify({ ...line, context: 'Primary', ...fields, msg })}\n`);
  };
}

/**
 * The cluster primary: forks the HTTP processes, replaces any that die
 * (with backoff, giving up on a crash loop), forwards SIGTERM/SIGINT for a
 * graceful shutdown and replaces every process on SIGHUP, one at a time.
 * It does nothing heavy itself — no Nest, no pool, no requests.
 */
export function runPrimary(config: AppConfig, policy = new RespawnPolicy()): void {
  const log = logger(config.log.level);
  const members = new Map<number, Member>();
  const respawnTimers = new Set<NodeJS.Timeout>();
  let stopping = false;
  let reloading = false;
  let exitCode: ExitCode = ExitCode.OK;
  const shares = new ShareWatch();
  /** No rebalancing before this (Date.now()): a move is under way, or just was. */
  let quietUntil = 0;

  const fork = (): Member => {
    // glibc reads its malloc settings as a process starts: they go into the fork's environment.
    const worker = cluster.fork(config.cluster.mallocEnv);
    const pid = worker.process.pid;
    const exited = new Promise<void>((done) => worker.once('exit', () => done()));
    // Only our own message type is looked at; anything else on the channel is left alone.
    const ready = new Promise<boolean>((done) => {
      const onMessage = (message: unknown) => {
        if (!isReadyMessage(message)) return;
        worker.off('message', onMessage);
        log('info', `process ${pid} ready`, { worker: pid });
        member.serving = true;
        done(true);
      };
      worker.on('message', onMessage);
      void exited.then(() => done(false));
    });
    worker.on('message', (message: unknown) => {
      const load = loadIn(message);
      if (load !== undefined) shares.record(worker.id, load);
    });
    const member: Member = { worker, ready, exited, serving: false, retiring: false };
    members.set(worker.id, member);
    log('info', `process ${pid} started`, { worker: pid });
    return member;
  };

  /**
   * The serving processes other than `newcomer` stop accepting for a while,
   * and each moves `fraction` of its connections: with the kernel dealing
   * connections, a busy process would win them back (ADR 0018).
   */
  const makeRoomFor = (newcomer: Member, maxMs: number, fraction: number): Member[] => {
    const others = [...members.values()].filter(
      (member) => member !== newcomer && member.serving && !member.retiring,
    );
    for (const { worker } of others) {
      if (worker.isConnected()) worker.send(makeRoomMessage(maxMs, fraction), ignore);
    }
    quietUntil = Date.now() + maxMs + REBALANCE_QUIET_MS;
    return others;
  };

  /** The busiest process makes room when it answers far more than its share (ADR 0018). */
  const rebalance = () => {
    if (stopping || reloading || Date.now() < quietUntil) return;
    const serving = [...members.values()].filter((m) => m.serving && !m.retiring);
    const decision = shares.decide(serving.map((m) => m.worker.id));
    const busiest = decision === undefined ? undefined : members.get(decision.id);
    if (decision === undefined || busiest === undefined || !busiest.worker.isConnected()) return;
    const pid = busiest.worker.process.pid;
    const why = decision.reason === 'tasks' ? 'its tasks wait for a thread' : 'it answers more';
    log(
      'info',
      `rebalance: process ${pid} carries more than its share (${why}); moving some of its connections`,
      {
        worker: pid,
        reason: decision.reason,
        fraction: Number(decision.fraction.toFixed(2)),
      },
    );
    // Tasks: the fraction is of the tasks in flight, so of the requests carrying them.
    const of = decision.reason === 'tasks' ? 'requests' : 'connections';
    busiest.worker.send(makeRoomMessage(MAKE_ROOM_MAX_MS, decision.fraction, of), ignore);
    // Tasks in flight settle as soon as the moved connections carry their next request:
    // one fresh report after the hold tells whether the move was enough (ADR 0027).
    const settleMs = decision.reason === 'tasks' ? LOAD_REPORT_MS : REBALANCE_QUIET_MS;
    quietUntil = Date.now() + MAKE_ROOM_MAX_MS + settleMs;
  };

  const finishIfDone = () => {
    if (stopping && members.size === 0) {
      log('info', `all processes exited; primary exits with ${exitCode}`, { exitCode });
      process.exit(exitCode);
    }
  };

  const stop = (reason: string, code: ExitCode) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const timer of respawnTimers) clearTimeout(timer);
    respawnTimers.clear();
    log('info', `${reason}: stopping ${members.size} processes`);
    for (const { worker } of members.values()) worker.process.kill('SIGTERM');
    const limitMs = config.shutdown.delayMs + config.shutdown.timeoutMs + STOP_MARGIN_MS;
    setTimeout(() => {
      log('error', `processes still running ${limitMs} ms after SIGTERM; killing them`);
      for (const { worker } of members.values()) worker.process.kill('SIGKILL');
      exitCode = ExitCode.SHUTDOWN_TIMEOUT;
    }, limitMs).unref();
    finishIfDone();
  };

  cluster.on('exit', (worker, code, signal) => {
    const member = members.get(worker.id);
    if (member === undefined) return;
    members.delete(worker.id);
    shares.forget(worker.id);
    const pid = worker.process.pid;
    const how = signal ?? `code ${code}`;
    if (stopping) {
      log('info', `process ${pid} exited (${how})`, { worker: pid, code, signal });
      // The primary's code reports the worst ending: a timeout is named as such. A
      // process our SIGTERM ended by default had not started listening: nothing was lost.
      const clean = code === ExitCode.OK || (code === null && signal === 'SIGTERM');
      if (!clean && exitCode === ExitCode.OK) {
        exitCode =
          code === ExitCode.SHUTDOWN_TIMEOUT ? ExitCode.SHUTDOWN_TIMEOUT : ExitCode.FAILURE;
      }
      finishIfDone();
      return;
    }
    if (member.retiring) {
      log('info', `process ${pid} replaced (${how})`, { worker: pid, code, signal });
      return;
    }
    const decision = policy.recordDeath(Date.now());
    if (decision.action === 'give-up') {
      log(
        'error',
        `crash loop: ${decision.recentDeaths} processes died within the respawn window; giving up`,
        { worker: pid, code, signal },
      );
      stop('crash loop', ExitCode.CRASH_LOOP);
      return;
    }
    log('warn', `process ${pid} died (${how}); starting a new one in ${decision.delayMs} ms`, {
      worker: pid,
      code,
      signal,
    });
    // A process holding its listener counted on this one to accept: none may be left accepting.
    for (const other of members.values()) {
      if (other.worker.isConnected()) other.worker.send(ACCEPT_MESSAGE, ignore);
    }
    const timer = setTimeout(() => {
      respawnTimers.delete(timer);
      if (stopping) return;
      const replacement = fork();
      // The survivors took the dead process's connections: each moves its share to the
      // replacement, which would otherwise wait for the connection age bound (and lose the race).
      void replacement.ready.then((ready) => {
        const serving = [...members.values()].filter((m) => m.serving && !m.retiring).length;
        if (ready && !stopping) makeRoomFor(replacement, MAKE_ROOM_MAX_MS, 1 / serving);
      });
    }, decision.delayMs);
    respawnTimers.add(timer);
  });

  /** One process at a time: start its replacement, wait until it is ready, then drain the old one. */
  const reload = async () => {
    if (stopping || reloading) {
      log('warn', 'SIGHUP ignored: a reload or shutdown is already running');
      return;
    }
    reloading = true;
    const current = [...members.values()].filter((member) => !member.retiring);
    log('info', `reload: replacing ${current.length} processes one at a time`);
    let replaced = 0;
    for (const old of current) {
      if (stopping) break;
      if (!members.has(old.worker.id)) continue; // died meanwhile; its respawn is already new
      const next = fork();
      const timeout = new Promise<boolean>((done) =>
        setTimeout(() => done(false), START_TIMEOUT_MS).unref(),
      );
      if (!(await Promise.race([next.ready, timeout]))) {
        log('error', `reload stopped: process ${next.worker.process.pid} did not become ready`);
        break;
      }
      // The old process's connections go to the replacement, not to the other processes
      // (which are as busy as before and would win them); they accept again once it is gone.
      old.retiring = true;
      makeRoomFor(next, config.shutdown.delayMs + config.shutdown.timeoutMs + MAKE_ROOM_MAX_MS, 0);
      old.worker.process.kill('SIGTERM');
      await old.exited;
      // The clients open new connections as they need them, not as the old ones close:
      // the others keep holding a while after the old process is gone.
      makeRoomFor(next, MAKE_ROOM_MAX_MS, 0);
      replaced += 1;
    }
    reloading = false;
    quietUntil = Date.now() + REBALANCE_QUIET_MS;
    log('info', `reload complete: ${replaced} of ${current.length} processes replaced`);
  };

  process.on('SIGTERM', () => stop('SIGTERM', ExitCode.OK));
  process.on('SIGINT', () => stop('SIGINT', ExitCode.OK));
  process.on('SIGHUP', () => void reload());

  // Before the first fork, which freezes it. `kernel`: no connection is ever handed to a
  // process that is dying, so none hangs (ADR 0010); Node's round robin would hand it on.
  cluster.schedulingPolicy =
    config.cluster.schedulingPolicy === 'kernel' ? cluster.SCHED_NONE : cluster.SCHED_RR;
  // The HTTP processes' young generation, when CLUSTER_MAX_SEMI_SPACE_MB sets one (ADR 0024).
  cluster.setupPrimary({
    execArgv: httpProcessExecArgv(process.execArgv, config.cluster.maxSemiSpaceMb),
  });
  setInterval(rebalance, LOAD_REPORT_MS).unref();
  startClusterMetrics({ cacheMs: config.metrics.cacheMs });
  // Every process's clients count against one quota (QUOTA_*), held here.
  startClusterQuotas();
  if (config.jobs.redisUrl === undefined) openJobStore(config.jobs.sqlitePath, log);
  for (let i = 0; i < config.cluster.workers; i++) fork();
  log(
    'info',
    `primary ${process.pid} started ${config.cluster.workers} processes (scheduling: ${config.cluster.schedulingPolicy})`,
  );
}

/**
 * The SQLite job store is made here, once, when the service starts and no
 * file exists: the processes only open it, so that none ever creates an empty
 * store beside the one the others write (docs/jobs.md).
 */
function openJobStore(path: string, log: ReturnType<typeof logger>): void {
  const { identity, created, orphanedWal } = createStoreIfMissing(path);
  const { storeId } = identity;
  if (orphanedWal !== undefined) {
    log('warn', `a write-ahead log without its job store was found; kept as ${orphanedWal}`);
  }
  log('info', `job store ${storeId} ${created ? 'created' : 'found'} at ${path}`, { storeId });
}
