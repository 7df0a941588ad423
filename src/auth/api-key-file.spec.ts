import { createHash } from 'node:crypto';
import { ApiKeyFileError, checkReload, parseApiKeyFile } from './api-key-file';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

describe(parseApiKeyFile.name, () => {
  it('reads names, digests and optional scopes; skips blank lines and comments', () => {
    const entries = parseApiKeyFile(
      [
        '# rotated 2026-11',
        `billing:${sha256('k1')}`,
        '',
        `  ops:${sha256('k2').toUpperCase()}:admin,jobs:read  `,
        '',
      ].join('\n'),
    ).entries;
    expect(entries.map(({ name, scopes }) => ({ name, scopes }))).toEqual([
      { name: 'billing', scopes: undefined },
      { name: 'ops', scopes: ['admin', 'jobs:read'] },
    ]);
    expect(entries[1]!.digest.equals(createHash('sha256').update('k2').digest())).toBe(true);
  });

  it('accepts a file without keys only when it says so: every key revoked', () => {
    expect(parseApiKeyFile('# nobody\n!no-keys\n')).toMatchObject({
      entries: [],
      intentionallyEmpty: true,
    });
    for (const empty of ['', '\n', '# nobody\n', `gone:revoked\n`]) {
      expect(() => parseApiKeyFile(empty)).toThrow(
        'the file lists no keys; a file that revokes every key says so in a line !no-keys',
      );
    }
    expect(() => parseApiKeyFile(`a:${sha256('1')}\n!no-keys\n`)).toThrow(
      'the file lists keys and also says !no-keys; keep one',
    );
  });

  it('refuses a file cut mid-line: no final line break', () => {
    expect(() => parseApiKeyFile(`a:${sha256('1')}\nbob:${sha256('2')}`)).toThrow(
      'line 2: the file does not end with a line break',
    );
  });

  it('refuses a cut or unknown scope rather than reading it as a smaller one', () => {
    for (const scopes of ['adm', 'admin,jobs:re', 'tasks:run,', 'jobs', '']) {
      expect(() => parseApiKeyFile(`# keys\nbob:${sha256('2')}:${scopes}\n`)).toThrow(
        /^line 2: scope \d is not one of tasks:run, jobs:read, jobs:write, admin/,
      );
    }
  });

  it('reads name:revoked as a key taken out on purpose', () => {
    const file = parseApiKeyFile(`a:${sha256('1')}\nbob:revoked\n`);
    expect(file.entries.map((entry) => entry.name)).toEqual(['a']);
    expect([...file.revoked]).toEqual(['bob']);
    expect(() => parseApiKeyFile(`bob:${sha256('1')}\nbob:revoked\n`)).toThrow(
      "line 2: the name 'bob' is listed twice",
    );
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
        parseApiKeyFile(`# header\n${line}\n`);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ApiKeyFileError);
      expect((error as Error).message).toMatch(/^line 2: /);
      expect((error as Error).message).not.toContain('not-a-digest');
    }
  });

  it('refuses a key listed under two names', () => {
    expect(() => parseApiKeyFile(`a:${sha256('1')}\nb:${sha256('1').toUpperCase()}\n`)).toThrow(
      'line 2: the same key is listed under another name',
    );
  });

  it('refuses a name listed twice', () => {
    expect(() => parseApiKeyFile(`a:${sha256('1')}\na:${sha256('2')}\n`)).toThrow(
      "line 2: the name 'a' is listed twice",
    );
  });
});

describe(checkReload.name, () => {
  const file = (text: string) => parseApiKeyFile(text);

  it('accepts a reload that keeps, adds, replaces or revokes keys', () => {
    const inUse = ['a', 'bob'];
    expect(() => checkReload(inUse, file(`a:${sha256('1')}\nbob:${sha256('3')}\n`))).not.toThrow();
    expect(() => checkReload(inUse, file(`a:${sha256('1')}\nbob:revoked\n`))).not.toThrow();
    expect(() => checkReload(inUse, file('!no-keys\n'))).not.toThrow();
  });

  it('refuses a reload that drops a key in use without revoking it', () => {
    expect(() =>
      checkReload(['a', 'bob', 'ops'], file(`a:${sha256('1')}\nc:${sha256('4')}\n`)),
    ).toThrow(
      "the keys 'bob', 'ops' are no longer listed; to revoke a key, replace its line with name:revoked",
    );
  });
});
