import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const scripts = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

/** The bench file each npm script runs (`tsx bench/x.ts`), by script name. */
const benchFiles = Object.entries(scripts).flatMap(([name, command]) => {
  const file = /\btsx (bench\/[\w/-]+\.ts)\b/.exec(command)?.[1];
  return file === undefined ? [] : [{ name, file, command }];
});

describe('the bench suite', () => {
  it('runs each script under one npm script name, with no flag that makes a second name', () => {
    const byFile = new Map<string, string[]>();
    for (const { name, file } of benchFiles) byFile.set(file, [...(byFile.get(file) ?? []), name]);
    expect([...byFile].filter(([, names]) => names.length > 1)).toEqual([]);
    // A mode is an argument after `--`, not a name of its own.
    expect(benchFiles.filter(({ command }) => /\.ts\s+-/.test(command))).toEqual([]);
  });

  it('names only scripts that exist at the top of bench/', () => {
    expect(benchFiles.length).toBeGreaterThan(0);
    const topLevel = new Set(
      readdirSync(join(ROOT, 'bench'))
        .filter((file) => file.endsWith('.ts'))
        .map((file) => `bench/${file}`),
    );
    for (const { name, file } of benchFiles) {
      expect({ name, file, exists: existsSync(join(ROOT, file)) && topLevel.has(file) }).toEqual({
        name,
        file,
        exists: true,
      });
    }
  });
});
