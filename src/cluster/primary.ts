import cluster from 'node:cluster';
import type { AppConfig } from '../config/app-config';
import { renameWarning } from '../config/renamed-variables';
import { ExitCode } from '../lifecycle/exit-codes';
import { startClusterQuotas } from '../auth/quota.primary';
import { startClusterMetrics } from '../metrics/cluster-metrics.primary';
import { LOAD_REPORT_MS } from './cluster-messages';
import { ClusterProcesses } from './cluster-processes';
import { httpProcessExecArgv } from './http-process-argv';
import { primaryLog, type PrimaryLog } from './primary-log';
import { describeEnding, PrimaryStop } from './primary-stop';
import { Rebalancer } from './rebalancer';
import { RespawnPolicy } from './respawn-policy';
import { Respawner } from './respawner';
import { RollingReload } from './rolling-reload';
import { createStoreIfMissing } from '../jobs/sqlite/sqlite-store-file';

/**
 * The cluster primary: forks the HTTP processes, replaces any that die
 * (with backoff, giving up on a crash loop), forwards SIGTERM/SIGINT for a
 * graceful shutdown and replaces every process on SIGHUP, one at a time.
 * It does nothing heavy itself — no Nest, no pool, no requests.
 */
export function runPrimary(config: AppConfig, policy = new RespawnPolicy()): void {
  const log = primaryLog(config.log.level);
  // The forked processes read the same environment: only the primary warns.
  for (const renamed of config.renamedVariables) {
    log('warn', renameWarning(renamed), { variable: renamed.old, replacement: renamed.current });
  }
  const drainMs = config.shutdown.delayMs + config.shutdown.timeoutMs;
  const processes = new ClusterProcesses(
    config.cluster.mallocEnv,
    (id, report) => rebalancer.record(id, report),
    log,
  );
  const rebalancer = new Rebalancer(processes, log);
  // Stopping cancels the respawns still waiting: nothing may be started any more.
  const stop = new PrimaryStop(processes, drainMs, log, () => respawner.cancel());
  const respawner = new Respawner(processes, rebalancer, stop, policy, log);
  const reload = new RollingReload(processes, rebalancer, stop, drainMs, log);

  cluster.on('exit', (handle, code, signal) => {
    const gone = processes.remove(handle.id);
    if (gone === undefined) return;
    rebalancer.forget(handle.id);
    const ending = { pid: handle.process.pid, code, signal };
    if (stop.isStopping) stop.processExited(ending);
    else if (gone.retiring) {
      log('info', `process ${ending.pid} replaced (${describeEnding(ending)})`, {
        process: ending.pid,
        code,
        signal,
      });
    } else respawner.processDied(ending);
  });
  process.on('SIGTERM', () => stop.stop('SIGTERM', ExitCode.OK));
  process.on('SIGINT', () => stop.stop('SIGINT', ExitCode.OK));
  process.on('SIGHUP', () => void reload.run());

  setUpForks(config);
  setInterval(() => {
    if (!stop.isStopping && !reload.isRunning) rebalancer.rebalance();
  }, LOAD_REPORT_MS).unref();
  startClusterMetrics({ cacheMs: config.metrics.cacheMs });
  // Every process's clients count against one quota (QUOTA_*), held here.
  startClusterQuotas();
  if (config.jobs.redisUrl === undefined) openJobStore(config.jobs.sqlitePath, log);
  for (let i = 0; i < config.cluster.processes; i++) processes.fork();
  log(
    'info',
    `primary ${process.pid} started ${config.cluster.processes} processes (scheduling: ${config.cluster.schedulingPolicy})`,
  );
}

/** How the processes are forked; set before the first fork, which freezes it. */
function setUpForks(config: AppConfig): void {
  // `kernel`: no connection is ever handed to a process that is dying, so none hangs
  // (ADR 0010); Node's round robin would hand it on.
  cluster.schedulingPolicy =
    config.cluster.schedulingPolicy === 'kernel' ? cluster.SCHED_NONE : cluster.SCHED_RR;
  // The HTTP processes' young generation, when CLUSTER_MAX_SEMI_SPACE_MB sets one (ADR 0024).
  cluster.setupPrimary({
    execArgv: httpProcessExecArgv(process.execArgv, config.cluster.maxSemiSpaceMb),
  });
}

/**
 * The SQLite job store is made here, once, when the service starts and no
 * file exists: the processes only open it, so that none ever creates an empty
 * store beside the one the others write (docs/jobs.md).
 */
function openJobStore(path: string, log: PrimaryLog): void {
  const { identity, created, orphanedWal } = createStoreIfMissing(path);
  const { storeId } = identity;
  if (orphanedWal !== undefined) {
    log('warn', `a write-ahead log without its job store was found; kept as ${orphanedWal}`);
  }
  log('info', `job store ${storeId} ${created ? 'created' : 'found'} at ${path}`, { storeId });
}
