import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/create-app';
import { testConfig } from './test-config';

export interface RunningApp {
  readonly app: NestFastifyApplication;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The real application on a real loopback port, with real worker threads.
 * `beforeListen` may add test-only Fastify hooks (e.g. an identity).
 */
export async function startApp(
  env: Record<string, string> = {},
  beforeListen?: (app: NestFastifyApplication) => void,
): Promise<RunningApp> {
  const app = await createApp(testConfig(env));
  beforeListen?.(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return { app, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
