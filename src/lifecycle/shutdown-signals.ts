import type { INestApplication } from '@nestjs/common';
import { ExitCode } from './exit-codes';
import { ShutdownService } from './shutdown.service';

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
        await app.close();
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
