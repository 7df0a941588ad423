import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ErrorCode } from '../../src/common/error-codes';
import { httpOf } from '../../src/http/error-table';

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

/** Each documented code with the status in the first column of its row. */
function documentedStatuses(markdown: string): Array<{ code: string; status: number }> {
  const section = markdown.split(/^## Errors$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => /^\|\s*\d{3}\s*\|/.test(line))
    .flatMap((row) => {
      const status = Number(row.split('|')[1]);
      return [...(row.split('|')[2] ?? '').matchAll(/`([A-Z_]+)`/g)].map((match) => ({
        code: match[1] as string,
        status,
      }));
    });
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

  it('gives each code the status the HTTP edge answers it with (src/http/error-table.ts)', () => {
    const rows = documentedStatuses(readFileSync(API_DOC, 'utf8'));
    expect(rows).toEqual(rows.map(({ code }) => ({ code, status: httpOf(code).status })));
  });
});
