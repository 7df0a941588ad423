import cluster, { type Worker } from 'node:cluster';
import type { AppConfig } from '../config/app-config';
import type { LogLevel } from '../config/environment-variables';
import { ExitCode } from '../lifecycle/exit-codes';
import { startClusterQuotas } from '../auth/quota.primary';
import { startClusterMetrics } from '../metrics/cluster-metrics.primary';
import { isReadyMessage } from './cluster-messages';
import { RespawnPolicy } from './respawn-policy';

/** A new process that has not said it is ready by then is treated as failed (rolling reload). */
const START_TIMEOUT_MS = 60_000;
/** Extra time the primary grants its processes beyond their own budget before killing them. */
const STOP_MARGIN_MS = 5_000;

interface Member {
  readonly worker: Worker;
  /** Resolves true when the process reports ready, false if it exits first. */
  readonly ready: Promise<boolean>;
  readonly exited: Promise<void>;
  /** Being replaced (rolling reload): its exit is expected, not a death. */
  retiring: boolean;
}

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

  const fork = (): Member => {
    const worker = cluster.fork();
    const pid = worker.process.pid;
    const exited = new Promise<void>((done) => worker.once('exit', () => done()));
    // Only our own message type is looked at; anything else on the channel is left alone.
    const ready = new Promise<boolean>((done) => {
      const onMessage = (message: unknown) => {
        if (!isReadyMessage(message)) return;
        worker.off('message', onMessage);
        log('info', `process ${pid} ready`, { worker: pid });
        done(true);
      };
      worker.on('message', onMessage);
      void exited.then(() => done(false));
    });
    const member: Member = { worker, ready, exited, retiring: false };
    members.set(worker.id, member);
    log('info', `process ${pid} started`, { worker: pid });
    return member;
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
    const timer = setTimeout(() => {
      respawnTimers.delete(timer);
      if (!stopping) fork();
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
      old.retiring = true;
      old.worker.process.kill('SIGTERM');
      await old.exited;
      replaced += 1;
    }
    reloading = false;
    log('info', `reload complete: ${replaced} of ${current.length} processes replaced`);
  };

  process.on('SIGTERM', () => stop('SIGTERM', ExitCode.OK));
  process.on('SIGINT', () => stop('SIGINT', ExitCode.OK));
  process.on('SIGHUP', () => void reload());

  // Before the first fork, which freezes it. `kernel`: no connection is ever handed to a
  // process that is dying, so none hangs (ADR 0010); Node's round robin would hand it on.
  cluster.schedulingPolicy =
    config.cluster.schedulingPolicy === 'kernel' ? cluster.SCHED_NONE : cluster.SCHED_RR;
  startClusterMetrics({ cacheMs: config.metrics.cacheMs });
  // Every process's clients count against one quota (QUOTA_*), held here.
  startClusterQuotas();
  for (let i = 0; i < config.cluster.workers; i++) fork();
  log(
    'info',
    `primary ${process.pid} started ${config.cluster.workers} processes (scheduling: ${config.cluster.schedulingPolicy})`,
  );
}
