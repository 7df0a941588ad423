import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/load-config';
import { createApp } from './http/create-app';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env);
  const app = await createApp(config);
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen({ port: config.http.port, host: config.http.host });
}

bootstrap().catch((error: unknown) => {
  // Before the logger exists, stderr is the only place a reason can go.
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : String((error as Error)?.stack ?? error)}\n`,
  );
  process.exit(1);
});
