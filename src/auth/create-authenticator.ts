import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import type { Authenticator } from './authenticator';
import { JwtAuthenticator } from './jwt-authenticator';

/**
 * The authenticator of `AUTH_MODE`; none for `none`. Reads the key file or
 * the public key now, so a bad one stops the start with its reason.
 */
export function createAuthenticator(
  config: Pick<AppConfig, 'auth' | 'http'>,
  log: Logger,
): Authenticator | undefined {
  const { auth } = config;
  switch (auth.mode) {
    case 'api-key':
      return new ApiKeyAuthenticator(auth.apiKeysFile ?? '', auth.defaultScopes, log);
    case 'jwt':
      return new JwtAuthenticator(auth.jwt, auth.defaultScopes, log);
    case 'none':
      if (!isLoopback(config.http.host)) {
        log.warn(
          { host: config.http.host },
          'AUTH_MODE=none on a non-loopback address: anyone who reaches this port may run tasks and read every job (docs/security.md)',
        );
      }
      return undefined;
  }
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}
