import { createHash } from 'node:crypto';
import { ApiKeyFileError, parseApiKeyFile } from './api-key-file';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

describe(parseApiKeyFile.name, () => {
  it('reads names, digests and optional scopes; skips blank lines and comments', () => {
    const entries = parseApiKeyFile(
      [
        '# rotated 2026-11',
        `billing:${sha256('k1')}`,
        '',
        `  ops:${sha256('k2').toUpperCase()}:admin,jobs:read  `,
      ].join('\n'),
    );
    expect(entries.map(({ name, scopes }) => ({ name, scopes }))).toEqual([
      { name: 'billing', scopes: undefined },
      { name: 'ops', scopes: ['admin', 'jobs:read'] },
    ]);
    expect(entries[1]!.digest.equals(createHash('sha256').update('k2').digest())).toBe(true);
  });

  it('accepts an empty file: every key revoked', () => {
    expect(parseApiKeyFile('# nobody\n')).toEqual([]);
  });

  it('names a bad line by its number, never by its content', () => {
    const secretish = 'billing:not-a-digest-but-maybe-a-key';
    const bad = [
      secretish,
      `billing:${sha256('k')}:scope with space`,
      `has space:${sha256('k')}`,
      `a:${sha256('k')}:x;y`,
      `:${sha256('k')}`,
    ];
    for (const line of bad) {
      let error: unknown;
      try {
        parseApiKeyFile(`# header\n${line}`);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ApiKeyFileError);
      expect((error as Error).message).toMatch(/^line 2: /);
      expect((error as Error).message).not.toContain('not-a-digest');
    }
  });

  it('refuses a key listed under two names', () => {
    expect(() => parseApiKeyFile(`a:${sha256('1')}\nb:${sha256('1').toUpperCase()}`)).toThrow(
      'line 2: the same key is listed under another name',
    );
  });

  it('refuses a name listed twice', () => {
    expect(() => parseApiKeyFile(`a:${sha256('1')}\na:${sha256('2')}`)).toThrow(
      "line 2: the name 'a' is listed twice",
    );
  });
});
