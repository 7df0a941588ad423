/**
 * The examples (examples/*) against the packages as a user installs them:
 * builds packages/*, packs each with `npm pack`, copies each example into a
 * temporary directory outside the repository (so nothing resolves from the
 * root's node_modules), installs its dependencies with the tarballs in place
 * of the workspace packages, builds it and runs its own jest tests. A file
 * left out of a package's `files`, or a dependency it forgot to declare,
 * fails here as it would for a user.
 *
 *   npm run test:examples                 # every example
 *   npm run test:examples -- fastify      # only these
 *   npm run test:examples -- --keep       # keeps the temporary directory, and says where
 *
 * Each example's jest results (`--json`) are written to
 * `$COREPOOL_EXAMPLES_RESULTS/<example>.json` when that is set: CI counts
 * them with the root's (`.ci/run`, `.ci/summarize.js`).
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const EXAMPLES = join(ROOT, 'examples');

interface PackageJson {
  name: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function log(line: string): void {
  process.stdout.write(`\n==> ${line}\n`);
}

/** Runs a command, its output passed through; throws when it fails. */
export function run(command: string, args: readonly string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) exited with ${result.status ?? result.signal}`,
    );
  }
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** Builds and packs every workspace package; returns each package's tarball by name. */
export function packPackages(into: string): Map<string, string> {
  log('building the packages');
  run('npm', ['run', 'build:packages'], ROOT);
  log('npm pack');
  mkdirSync(into, { recursive: true });
  const result = spawnSync('npm', ['pack', '--workspaces', '--json', '--pack-destination', into], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`npm pack exited with ${result.status}`);
  const packed = JSON.parse(result.stdout) as Array<{
    name: string;
    filename: string;
    files: unknown[];
  }>;
  const tarballs = new Map<string, string>();
  for (const { name, filename, files } of packed) {
    process.stdout.write(`${name}: ${filename}, ${files.length} files\n`);
    tarballs.set(name, join(into, filename));
  }
  return tarballs;
}

/** The example's own copy, its workspace dependencies pointing at the tarballs. */
export function copyExample(
  name: string,
  into: string,
  tarballs: ReadonlyMap<string, string>,
): string {
  const dir = join(into, name);
  cpSync(join(EXAMPLES, name), dir, {
    recursive: true,
    // What a local install or build left: tsc's incremental state would call a missing dist/ built.
    filter: (source) =>
      !['node_modules', 'dist'].includes(basename(source)) && !source.endsWith('.tsbuildinfo'),
  });
  const manifestFile = join(dir, 'package.json');
  const manifest = readJson<PackageJson>(manifestFile);
  for (const dependencies of [manifest.dependencies, manifest.devDependencies]) {
    for (const dependency of Object.keys(dependencies ?? {})) {
      const tarball = tarballs.get(dependency);
      if (tarball !== undefined && dependencies !== undefined)
        dependencies[dependency] = `file:${tarball}`;
    }
  }
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

/** Installs, builds and tests one example; true when its tests passed. */
function testExample(name: string, dir: string, resultsDir: string | undefined): boolean {
  const manifest = readJson<PackageJson>(join(dir, 'package.json'));
  try {
    log(`${name}: npm install`);
    run('npm', ['install', '--no-audit', '--no-fund'], dir);
    if (manifest.scripts?.build !== undefined) {
      log(`${name}: npm run build`);
      run('npm', ['run', 'build'], dir);
    }
    // As the example's own README says to run them: `nest new` names its end-to-end tests test:e2e.
    const script = manifest.scripts?.['test:e2e'] !== undefined ? 'test:e2e' : 'test';
    const outputFile = join(resultsDir ?? dir, `${name}.json`);
    log(`${name}: npm run ${script}`);
    run('npm', ['run', script, '--', '--ci', '--json', `--outputFile=${outputFile}`], dir);
    return true;
  } catch (error) {
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return false;
  }
}

function main(): void {
  const args = process.argv.slice(2);
  const keep = args.includes('--keep');
  const wanted = args.filter((arg) => !arg.startsWith('--'));
  const examples = readdirSync(EXAMPLES).filter(
    (name) =>
      existsSync(join(EXAMPLES, name, 'package.json')) &&
      (wanted.length === 0 || wanted.includes(name)),
  );
  const resultsDir = process.env.COREPOOL_EXAMPLES_RESULTS;
  if (resultsDir !== undefined) mkdirSync(resultsDir, { recursive: true });

  const work = mkdtempSync(join(tmpdir(), 'corepool-examples-'));
  const failed: string[] = [];
  try {
    const tarballs = packPackages(join(work, 'packages'));
    for (const name of examples) {
      if (!testExample(name, copyExample(name, work, tarballs), resultsDir)) failed.push(name);
    }
  } finally {
    if (keep) log(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  log(
    failed.length === 0
      ? `examples passed: ${examples.join(', ')}`
      : `examples failed: ${failed.join(', ')}`,
  );
  process.exitCode = failed.length === 0 ? 0 : 1;
}

if (require.main === module) main();
