import type { INestApplication } from '@nestjs/common';
import { ExitCode } from './exit-codes';
import { ShutdownService } from './shutdown.service';

/**
 * Closing the application after the drain: connections to dependencies that
 * are down (a Redis that went away) may never finish closing, and a process
 * that never exits stalls a reload and a rollout. Past this, it exits anyway.
 */
const CLOSE_BUDGET_MS = 5000;

/**
 * SIGTERM or SIGINT starts the graceful shutdown; the process then closes the
 * Nest application and exits with the shutdown's code. A repeated signal (a
 * second Ctrl-C, or the primary forwarding one the process already got) does
 * not restart it.
 */
export function exitOnShutdownSignals(app: INestApplication): void {
  const lifecycle = app.get(ShutdownService);
  const onSignal = (signal: NodeJS.Signals) => {
    void lifecycle
      .drain(signal)
      .then(async (code) => {
        await closeWithin(app, CLOSE_BUDGET_MS);
        process.exit(code);
      })
      .catch((error: unknown) => {
        process.stderr.write(`shutdown failed: ${String((error as Error)?.stack ?? error)}\n`);
        process.exit(ExitCode.FAILURE);
      });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

async function closeWithin(app: INestApplication, budgetMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), budgetMs);
  });
  const outcome = await Promise.race([app.close().then(() => 'closed' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    process.stderr.write(`application close did not finish within ${budgetMs} ms; exiting\n`);
  }
}
