import { execFileSync } from 'node:child_process';
import { relative, resolve } from 'node:path';

const SRC = resolve(__dirname, '..');
const ENTRY = resolve(__dirname, 'thread-entry.ts');

/** What a fresh process holds after loading `entry`, as a thread does: packages and corepool's own files. */
function loadedBy(entry: string): { packages: string[]; sources: string[] } {
  const script =
    `require(${JSON.stringify(entry)});` +
    'const files = Object.keys(require.cache);' +
    'const packages = files.map((file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file)?.[1]).filter(Boolean);' +
    "const sources = files.filter((file) => !file.includes('node_modules'));" +
    'console.log(JSON.stringify({ packages: [...new Set(packages)], sources }));';
  const output = execFileSync(
    process.execPath,
    ['--require', require.resolve('tsx/cjs'), '-e', script],
    { encoding: 'utf8' },
  );
  const loaded = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as {
    packages: string[];
    sources: string[];
  };
  return { ...loaded, sources: loaded.sources.map((file) => relative(SRC, file)) };
}

describe('thread entry', () => {
  it("loads the tasks without a web framework, a validation library or Piscina's main module", () => {
    const { packages, sources } = loadedBy(ENTRY);
    // It did load the tasks: an empty list would pass the checks below for nothing.
    expect(sources).toEqual(expect.arrayContaining(['workers/thread-entry.ts', 'tasks/index.ts']));
    expect(packages).not.toContain('piscina');
    for (const heavy of ['class-validator', 'class-transformer', 'ajv', 'reflect-metadata']) {
      expect(packages).not.toContain(heavy);
    }
    expect(packages.filter((name) => name.startsWith('@nestjs/'))).toEqual([]);
  }, 30_000);

  it('sees the framework where a file does load it', () => {
    const { packages } = loadedBy(resolve(SRC, 'http/route-behaviour.ts'));
    expect(packages).toContain('@nestjs/common');
  }, 30_000);
});
