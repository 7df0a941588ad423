import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface LockedPackage {
  readonly version?: string;
}

const lock = JSON.parse(readFileSync(join(__dirname, '../../package-lock.json'), 'utf8')) as {
  readonly packages: Record<string, LockedPackage>;
};

/** Every installed copy, by package name: `node_modules/a/node_modules/b` is a copy of `b`. */
function copiesByName(): Map<string, Set<string>> {
  const copies = new Map<string, Set<string>>();
  for (const [path, locked] of Object.entries(lock.packages)) {
    if (path === '' || locked.version === undefined) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const versions = copies.get(name) ?? new Set<string>();
    versions.add(locked.version);
    copies.set(name, versions);
  }
  return copies;
}

/** The HTTP stack every request runs through: Fastify, its router and plugins, and Nest's adapter. */
const isHttpStack = (name: string) =>
  name === 'fastify' ||
  name.startsWith('@fastify/') ||
  name.startsWith('@nestjs/') ||
  ['find-my-way', 'light-my-request', 'avvio', 'fast-json-stringify', 'pino'].includes(name);

describe('package-lock.json', () => {
  it('installs one copy of each package of the HTTP stack', () => {
    const doubled = [...copiesByName()]
      .filter(([name, versions]) => isHttpStack(name) && versions.size > 1)
      .map(([name, versions]) => `${name}: ${[...versions].join(', ')}`);
    expect(doubled).toEqual([]);
  });

  it('finds the router in the lock, so the check above reads the right shape', () => {
    expect(copiesByName().has('find-my-way')).toBe(true);
  });
});
