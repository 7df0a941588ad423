// First: on an unsupported Node.js, one line and exit 1 before anything else loads.
import './runtime/require-supported-node';
import 'reflect-metadata';
import cluster from 'node:cluster';
import { followPrimary, notifyPrimaryReady } from './cluster/cluster-messages';
import { runPrimary } from './cluster/primary';
import type { AppConfig } from './config/app-config';
import { ConfigError, loadConfig } from './config/load-config';
import { createApp, listen } from './create-app';
import { exitOnShutdownSignals } from './lifecycle/shutdown-signals';
import { ShutdownService } from './lifecycle/shutdown.service';
import { assertExporterInstalled, ExporterMissingError } from './tracing/exporter-check';
import { WorkerPoolService } from '@corepool/nestjs';

/** One HTTP process: the Nest application with its worker-thread pool. */
async function runServer(config: AppConfig): Promise<void> {
  const app = await createApp(config);
  await listen(app, config);
  // Signals drain the process (docs/operations.md, "Graceful shutdown") instead of Nest's plain close.
  exitOnShutdownSignals(app);
  // The primary asks a process to make room for a new one, so that it gets its share of connections.
  // Its load reports carry the tasks waiting per thread, so that the primary moves
  // connections off a process whose tasks wait while another's thread idles (ADR 0027).
  const pool = app.get(WorkerPoolService);
  followPrimary(process, app.get(ShutdownService), () => pool.tasksPerThread());
  // Listening with warm threads: a rolling reload may now retire the process this one replaces.
  notifyPrimaryReady();
}

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env);
  // Before any process is forked: an optional exporter that is missing stops the start.
  assertExporterInstalled(config.tracing);
  if (config.cluster.processes > 1 && cluster.isPrimary) runPrimary(config);
  else await runServer(config);
}

bootstrap().catch((error: unknown) => {
  // Before the logger exists, stderr is the only place a reason can go.
  const reason =
    error instanceof ConfigError || error instanceof ExporterMissingError
      ? error.message
      : String((error as Error)?.stack ?? error);
  process.stderr.write(`${reason}\n`);
  process.exit(1);
});
