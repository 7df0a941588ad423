import { isLabelSafe } from './client-id';
import { isScope, SCOPES } from './scopes';

/** One key the service accepts: who it is, the SHA-256 of the key, what it may do. */
export interface ApiKeyEntry {
  readonly name: string;
  readonly digest: Buffer;
  /** Undefined: the default scopes. */
  readonly scopes: readonly string[] | undefined;
}

/** What a key file says: the keys it lists, and the names it revokes on purpose. */
export interface ApiKeyFile {
  readonly entries: readonly ApiKeyEntry[];
  /** Names listed as `name:revoked`: keys removed on purpose. */
  readonly revoked: ReadonlySet<string>;
  /** The file holds the `!no-keys` line: every key is revoked on purpose. */
  readonly intentionallyEmpty: boolean;
}

/** `name:sha256hex` and, optionally, `:scope,scope`. */
const LINE = /^([^:]+):([0-9a-fA-F]{64})(?::(.*))?$/;
/** A key taken out on purpose: without this line its disappearance reads as a cut file. */
const REVOKED = /^([^:]+):revoked$/;
/** The one line that makes a file without keys valid. */
export const NO_KEYS_MARKER = '!no-keys';

export class ApiKeyFileError extends Error {
  override readonly name = 'ApiKeyFileError';
}

/**
 * Parses an API key file: one `name:sha256hex(key)` line per key, optionally
 * `:scope,scope` after it; `name:revoked` for a key removed on purpose;
 * blank lines and `#` comments are skipped. Only digests are stored, so the
 * file (a Kubernetes Secret) never holds a key in clear. A bad line is
 * reported by its number, never by its content.
 *
 * A file cut short must not pass for a smaller one, so: the file ends with a
 * line break (a copy cut mid-line does not), scopes are known names (`adm`,
 * the start of `admin`, is an error, not a smaller scope), and a file
 * without keys needs the `!no-keys` line (an empty save is not "revoke all").
 * See docs/adr/0045-credentials-and-anonymous-callers-are-read-strictly.md.
 */
export function parseApiKeyFile(text: string): ApiKeyFile {
  const entries: ApiKeyEntry[] = [];
  const revoked = new Set<string>();
  let intentionallyEmpty = false;
  /** A name is one client: listed twice (as a key or revoked), the caller would be ambiguous. */
  const names = new Set<string>();
  /** One key, one client: a digest listed twice would make the caller ambiguous. */
  const digests = new Set<string>();
  const lines = text.split(/\r?\n/);
  if (text !== '' && lines.at(-1) !== '') {
    throw new ApiKeyFileError(
      `line ${lines.length}: the file does not end with a line break, as a file cut short would not; end its last line`,
    );
  }
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const where = `line ${index + 1}`;
    if (line === NO_KEYS_MARKER) {
      intentionallyEmpty = true;
      continue;
    }
    const revokedName = REVOKED.exec(line)?.[1];
    // Scopes hold colons themselves (`jobs:read`): the digest's fixed length marks where they start.
    const match = LINE.exec(line);
    const [, name = revokedName ?? '', digest = '', scopeList] = match ?? [];
    if ((match === null && revokedName === undefined) || !isLabelSafe(name)) {
      throw new ApiKeyFileError(
        `${where}: expected name:sha256hex(key)[:scope,scope] or name:revoked, the name 1-64 letters, digits, . _ -`,
      );
    }
    if (names.has(name)) throw new ApiKeyFileError(`${where}: the name '${name}' is listed twice`);
    names.add(name);
    if (match === null) {
      revoked.add(name);
      continue;
    }
    if (digests.has(digest.toLowerCase())) {
      throw new ApiKeyFileError(`${where}: the same key is listed under another name`);
    }
    digests.add(digest.toLowerCase());
    const scopes = scopeList?.split(',').map((scope) => scope.trim());
    const unknown = scopes?.findIndex((scope) => !isScope(scope)) ?? -1;
    if (unknown >= 0) {
      throw new ApiKeyFileError(
        `${where}: scope ${unknown + 1} is not one of ${SCOPES.join(', ')} (scopes are comma-separated)`,
      );
    }
    entries.push({ name, digest: Buffer.from(digest, 'hex'), scopes });
  }
  if (intentionallyEmpty && entries.length > 0) {
    throw new ApiKeyFileError(`the file lists keys and also says ${NO_KEYS_MARKER}; keep one`);
  }
  if (entries.length === 0 && !intentionallyEmpty) {
    throw new ApiKeyFileError(
      `the file lists no keys; a file that revokes every key says so in a line ${NO_KEYS_MARKER}`,
    );
  }
  return { entries, revoked, intentionallyEmpty };
}

/**
 * Checks a reload against the keys in use: a key that was in use must still
 * be listed, or be revoked in the same edit (`name:revoked`, or the whole file
 * `!no-keys`). A line that disappears without a word is what a file cut at a
 * line boundary, or a bad merge, looks like; it is never taken as revocation.
 */
export function checkReload(inUse: Iterable<string>, next: ApiKeyFile): void {
  if (next.intentionallyEmpty) return;
  const listed = new Set(next.entries.map((entry) => entry.name));
  const dropped = [...inUse].filter((name) => !listed.has(name) && !next.revoked.has(name));
  if (dropped.length > 0) {
    throw new ApiKeyFileError(
      `the keys ${dropped.map((name) => `'${name}'`).join(', ')} are no longer listed; to revoke a key, replace its line with name:revoked`,
    );
  }
}
