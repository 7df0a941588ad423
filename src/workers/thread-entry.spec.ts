import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const ENTRY = resolve(__dirname, 'thread-entry.ts');

/** The packages a fresh process holds after loading the thread entry, as a thread does. */
function packagesLoadedBy(entry: string): string[] {
  const script =
    `require(${JSON.stringify(entry)});` +
    'const names = Object.keys(require.cache).map((file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file)?.[1]).filter(Boolean);' +
    'console.log(JSON.stringify([...new Set(names)]));';
  const output = execFileSync(
    process.execPath,
    ['--require', require.resolve('tsx/cjs'), '-e', script],
    { encoding: 'utf8' },
  );
  return JSON.parse(output.trim().split('\n').at(-1) ?? '[]') as string[];
}

describe('thread entry', () => {
  it("loads the tasks without a web framework, a validation library or Piscina's main module", () => {
    const loaded = packagesLoadedBy(ENTRY);
    expect(loaded).not.toContain('piscina');
    for (const heavy of ['class-validator', 'class-transformer', 'ajv', 'reflect-metadata']) {
      expect(loaded).not.toContain(heavy);
    }
    expect(loaded.filter((name) => name.startsWith('@nestjs/'))).toEqual([]);
  });
});
