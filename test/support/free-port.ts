import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * A free TCP port on loopback, released just before the caller's server takes
 * it; shared by the tests and the bench, which start real processes.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
