import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Logger } from 'pino';
import { parseApiKeyFile, type ApiKeyEntry } from './api-key-file';
import {
  credentialOf,
  type AuthenticationResult,
  type Authenticator,
  type Rejection,
} from './authenticator';
import type { ClientIdentity } from './client-identity';

/**
 * How often the key file's status is polled. `fs.watchFile` polls the path,
 * so it sees a Kubernetes Secret's update (a symlink swapped underneath),
 * which an inotify watch on the old file would miss.
 */
const WATCH_INTERVAL_MS = 1_000;

const MISSING: Rejection = Object.freeze({ rejected: 'missing' });
const INVALID: Rejection = Object.freeze({ rejected: 'invalid' });

/**
 * API keys from a file of `name:sha256hex(key)` lines. A presented key is
 * hashed and compared with every listed digest in constant time
 * (`timingSafeEqual`, no early exit), so the time taken says nothing about
 * which keys exist. The file is read again on SIGHUP and when it changes; a
 * file that no longer parses keeps the previous keys (and logs why).
 */
export class ApiKeyAuthenticator implements Authenticator {
  private identities: { entry: ApiKeyEntry; identity: ClientIdentity }[] = [];
  private readonly onSignal = () => this.reload('SIGHUP');

  /** Reads the file now: a missing or malformed file stops the start. */
  constructor(
    private readonly file: string,
    private readonly defaultScopes: readonly string[],
    private readonly log: Logger,
  ) {
    this.load();
    process.on('SIGHUP', this.onSignal);
    watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, (now, before) => {
      if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino) this.reload('file changed');
    });
  }

  authenticate(headers: IncomingHttpHeaders): AuthenticationResult {
    const key = credentialOf(headers, { apiKeyHeader: true });
    if (key === undefined) return MISSING;
    const digest = createHash('sha256').update(key).digest();
    let found: ClientIdentity | undefined;
    for (const { entry, identity } of this.identities) {
      // Every digest is compared, match or not: the loop's time does not depend on which key matched.
      if (timingSafeEqual(digest, entry.digest) && found === undefined) found = identity;
    }
    return found ?? INVALID;
  }

  close(): void {
    process.off('SIGHUP', this.onSignal);
    unwatchFile(this.file);
  }

  private load(): void {
    const entries = parseApiKeyFile(readFileSync(this.file, 'utf8'));
    this.identities = entries.map((entry) => ({
      entry,
      identity: Object.freeze({
        id: entry.name,
        scopes: new Set(entry.scopes ?? this.defaultScopes),
        authenticated: true,
      }),
    }));
  }

  private reload(why: string): void {
    try {
      this.load();
      this.log.info({ keys: this.identities.length }, `API keys reloaded (${why})`);
    } catch (error) {
      // Keys are never in the message: parse errors name a line number only.
      this.log.error(
        { err: error },
        `API keys not reloaded (${why}); the previous keys stay in use`,
      );
    }
  }
}
