import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './servers';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Runs `npm run build` when dist/ is missing or older than any file in src/. */
export function buildIfNeeded(log: (line: string) => void): void {
  const main = join(ROOT, 'dist', 'main.js');
  const threadEntry = join(ROOT, 'dist', 'workers', 'thread-entry.js');
  const fresh =
    existsSync(main) &&
    existsSync(threadEntry) &&
    statSync(main).mtimeMs >= newestMtime(join(ROOT, 'src'));
  if (fresh) return;
  log('dist/ is missing or older than src/: npm run build');
  const built = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
}
