import { isLabelSafe } from './client-id';

/** One key the service accepts: who it is, the SHA-256 of the key, what it may do. */
export interface ApiKeyEntry {
  readonly name: string;
  readonly digest: Buffer;
  /** Undefined: the default scopes. */
  readonly scopes: readonly string[] | undefined;
}

/** `name:sha256hex` and, optionally, `:scope,scope`. */
const LINE = /^([^:]+):([0-9a-fA-F]{64})(?::(.*))?$/;
const SCOPE = /^[\w:.-]+$/;

export class ApiKeyFileError extends Error {
  override readonly name = 'ApiKeyFileError';
}

/**
 * Parses an API key file: one `name:sha256hex(key)` line per key, optionally
 * `:scope,scope` after it; blank lines and `#` comments are skipped. Only
 * digests are stored, so the file (a Kubernetes Secret) never holds a key in
 * clear. A bad line is reported by its number, never by its content.
 */
export function parseApiKeyFile(text: string): ApiKeyEntry[] {
  const entries: ApiKeyEntry[] = [];
  const names = new Set<string>();
  /** One key, one client: a digest listed twice would make the caller ambiguous. */
  const digests = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const where = `line ${index + 1}`;
    // Scopes hold colons themselves (`jobs:read`): the digest's fixed length marks where they start.
    const match = LINE.exec(line);
    const [, name = '', digest = '', scopeList] = match ?? [];
    if (match === null || !isLabelSafe(name)) {
      throw new ApiKeyFileError(
        `${where}: expected name:sha256hex(key)[:scope,scope], the name 1-64 letters, digits, . _ -`,
      );
    }
    if (names.has(name)) throw new ApiKeyFileError(`${where}: the name '${name}' is listed twice`);
    names.add(name);
    if (digests.has(digest.toLowerCase())) {
      throw new ApiKeyFileError(`${where}: the same key is listed under another name`);
    }
    digests.add(digest.toLowerCase());
    const scopes = scopeList?.split(',').map((scope) => scope.trim());
    if (scopes !== undefined && !scopes.every((scope) => SCOPE.test(scope))) {
      throw new ApiKeyFileError(`${where}: scopes are comma-separated names`);
    }
    entries.push({ name, digest: Buffer.from(digest, 'hex'), scopes });
  }
  return entries;
}
