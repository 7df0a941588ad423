import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ErrorCode } from '../../src/common/error-codes';

const API_DOC = resolve(__dirname, '..', '..', 'docs', 'api.md');

/** The codes named in the second column of the table under `## Errors`. */
function documentedCodes(markdown: string): string[] {
  const section = markdown.split(/^## Errors$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => /^\|\s*\d{3}\s*\|/.test(line))
    .flatMap((row) => [...(row.split('|')[2] ?? '').matchAll(/`([A-Z_]+)`/g)])
    .map((match) => match[1] as string);
}

describe('docs/api.md error table', () => {
  const documented = documentedCodes(readFileSync(API_DOC, 'utf8'));

  it('lists every error code the service answers with', () => {
    const missing = Object.values(ErrorCode).filter((code) => !documented.includes(code));
    expect(missing).toEqual([]);
  });

  it('lists no code the service does not have, and each code once', () => {
    const known: readonly string[] = Object.values(ErrorCode);
    expect(documented.filter((code) => !known.includes(code))).toEqual([]);
    expect(documented.filter((code, i) => documented.indexOf(code) !== i)).toEqual([]);
  });
});
