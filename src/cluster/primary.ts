import cluster from 'node:cluster';
import type { AppConfig } from '../config/app-config';
import { startClusterMetrics } from '../metrics/cluster-metrics.primary';

/**
 * The cluster primary: forks the HTTP processes and replaces any that die.
 * It does nothing heavy itself — no Nest, no pool, no requests.
 */
export function runPrimary(config: AppConfig): void {
  const log = (message: string) =>
    process.stdout.write(
      `${JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, context: 'Primary', msg: message })}\n`,
    );
  startClusterMetrics();
  for (let i = 0; i < config.cluster.workers; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    log(`process ${worker.process.pid} exited (${signal ?? code}); starting a new one`);
    cluster.fork();
  });
  log(`primary ${process.pid} started ${config.cluster.workers} processes`);
}
