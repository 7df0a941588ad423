import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Logger } from 'pino';
import { checkReload, parseApiKeyFile, type ApiKeyEntry } from './api-key-file';
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
 * hashed, looked up by its digest and confirmed with `timingSafeEqual`: the
 * work per request does not grow with the number of keys, and its timing
 * tells nothing a caller could use (it would have to choose digests, i.e.
 * know keys). The file is read again on SIGHUP and when it changes; a file
 * that no longer parses, or that drops a key in use without revoking it
 * (`checkReload`: a half-written save, a copy cut short), keeps the previous
 * keys (and logs why, at `error`).
 */
export class ApiKeyAuthenticator implements Authenticator {
  /** By the hex SHA-256 of the key. */
  private byDigest = new Map<string, { entry: ApiKeyEntry; identity: ClientIdentity }>();
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
    const known = this.byDigest.get(digest.toString('hex'));
    // The lookup's timing depends on the digest, which no caller can choose without the key
    // itself; the bytes are then compared in constant time, as a key comparison must be.
    if (known === undefined || !timingSafeEqual(digest, known.entry.digest)) return INVALID;
    return known.identity;
  }

  close(): void {
    process.off('SIGHUP', this.onSignal);
    unwatchFile(this.file);
  }

  private load(): void {
    const file = parseApiKeyFile(readFileSync(this.file, 'utf8'));
    checkReload(
      [...this.byDigest.values()].map(({ entry }) => entry.name),
      file,
    );
    this.byDigest = new Map(
      file.entries.map((entry) => [
        entry.digest.toString('hex'),
        {
          entry,
          identity: Object.freeze({
            id: entry.name,
            scopes: new Set(entry.scopes ?? this.defaultScopes),
            authenticated: true,
          }),
        },
      ]),
    );
  }

  private reload(why: string): void {
    try {
      this.load();
      this.log.info({ keys: this.byDigest.size }, `API keys reloaded (${why})`);
    } catch (error) {
      // Keys are never in the message: parse errors name a line number only, reload checks a name.
      this.log.error(
        { err: error },
        `API keys not reloaded (${why}); the previous keys stay in use`,
      );
    }
  }
}
