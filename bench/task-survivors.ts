/**
 * What a dispatched task leaves alive at the next scavenge (ADR 0036): Piscina
 * alone, one thread, a task that returns its input, at `--rate` tasks a
 * second, in a fresh process per variant, side by side:
 *
 * - `as-is`: Piscina as installed;
 * - `cached-interface`: each WorkerInfo's `interface` built once. Piscina
 *   builds it again, with six getter closures, for every ready thread at
 *   every dispatch.
 *
 * For each scavenge of the process, from `v8.GCProfiler`: what survived in the
 * young generation, what it promoted to the old one, and its pause. A task
 * that ended before the scavenge should leave nothing: `survived` ÷ the tasks
 * dispatched per scavenge (on average) is what each one left. The young generation is held at
 * the 16 MiB semi-space the service's processes grow to while they start, and
 * each task comes with `--garbage-kb` of objects that die at once, as a
 * submission's request does (~64 KB), so scavenges come at the service's pace.
 *
 *   npx tsx bench/task-survivors.ts [--rate 250] [--seconds 20] [--garbage-kb 64]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { GCProfiler } from 'node:v8';
import { fmt, median } from './lib/stats';

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '250' },
    seconds: { type: 'string', default: '20' },
    'garbage-kb': { type: 'string', default: '64' },
    child: { type: 'string' },
  },
});
const VARIANTS = ['as-is', 'cached-interface'] as const;
type Variant = (typeof VARIANTS)[number];

interface Scavenge {
  readonly survivedKb: number;
  readonly promotedKb: number;
  readonly pauseMs: number;
}

/** A child's window: the tasks it dispatched, and its scavenges in the meantime. */
interface Measured {
  readonly dispatched: number;
  readonly scavenges: Scavenge[];
}

function spaceUsed(stats: { heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] }) {
  return (name: string) =>
    stats.heapSpaceStatistics.find((space) => space.spaceName === name)?.spaceUsedSize ?? 0;
}

/** About `kb` KiB of small objects that nobody keeps once it returns. */
function garbage(kb: number): number {
  const held: number[][] = [];
  for (let i = 0; i < kb * 16; i++) held.push([i, i + 1, i + 2]);
  return held.length;
}

/** In the child: run the pool at the rate, return every scavenge of the measured window. */
async function measure(variant: Variant): Promise<Measured> {
  if (variant === 'cached-interface') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { WorkerInfo } = require(join(dirname(require.resolve('piscina')), 'worker_pool')) as {
      WorkerInfo: { prototype: object };
    };
    const original = Object.getOwnPropertyDescriptor(WorkerInfo.prototype, 'interface');
    const cache = new WeakMap<object, unknown>();
    Object.defineProperty(WorkerInfo.prototype, 'interface', {
      get(this: object) {
        if (!cache.has(this)) cache.set(this, original?.get?.call(this));
        return cache.get(this);
      },
    });
  }
  const { Piscina } = await import('piscina');
  const directory = mkdtempSync(join(tmpdir(), 'corepool-survivors-'));
  const task = join(directory, 'echo.js');
  writeFileSync(task, 'module.exports = (input) => input;\n');
  const pool = new Piscina({ filename: task, minThreads: 1, maxThreads: 1 });
  await pool.run(0);
  const rate = Number(args.rate);
  const seconds = Number(args.seconds);
  // Two per tick, as requests that arrive together do: the second one queues.
  const perTick = 2;
  let dispatched = 0;
  const profiler = new GCProfiler();
  profiler.start();
  const ticker = setInterval(
    () => {
      for (let i = 0; i < perTick; i++) {
        void pool.run(dispatched++);
        garbage(Number(args['garbage-kb']));
      }
    },
    (1000 * perTick) / rate,
  );
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  clearInterval(ticker);
  const { statistics } = profiler.stop();
  // Lets the tasks in flight finish: `destroy` would reject them, unhandled.
  await pool.close();
  rmSync(directory, { recursive: true, force: true });
  const scavenges = statistics
    .filter((gc) => gc.gcType === 'Scavenge')
    .map((gc) => {
      const before = spaceUsed(gc.beforeGC);
      const after = spaceUsed(gc.afterGC);
      return {
        survivedKb: after('new_space') / 1024,
        promotedKb: (after('old_space') - before('old_space')) / 1024,
        pauseMs: gc.cost / 1000,
      };
    });
  return { dispatched, scavenges };
}

function main(): void {
  if (args.child !== undefined) {
    void measure(args.child as Variant).then((measured) => {
      process.stdout.write(`${JSON.stringify(measured)}\n`);
    });
    return;
  }
  console.log(
    `Piscina alone, 1 thread, ${args.rate} tasks/s for ${args.seconds} s, ${args['garbage-kb']} KiB of garbage per task, ` +
      '16 MiB semi-space; medians over the scavenges',
  );
  console.log(
    'variant          | scavenges | survived KB | promoted KB | pause ms | bytes left per task',
  );
  for (const variant of VARIANTS) {
    const out = execFileSync(
      process.execPath,
      [
        '--min-semi-space-size=16',
        '--require',
        require.resolve('tsx/cjs'),
        __filename,
        `--child=${variant}`,
        `--rate=${args.rate}`,
        `--seconds=${args.seconds}`,
        `--garbage-kb=${args['garbage-kb']}`,
      ],
      { encoding: 'utf8' },
    );
    const { dispatched, scavenges } = JSON.parse(out.trim().split('\n').pop() ?? '') as Measured;
    const survived = median(scavenges.map((s) => s.survivedKb));
    const perTask = (survived * 1024) / (dispatched / Math.max(1, scavenges.length));
    console.log(
      `${variant.padEnd(16)} | ${String(scavenges.length).padStart(9)} | ${fmt(survived, 0).padStart(11)} | ` +
        `${fmt(median(scavenges.map((s) => s.promotedKb)), 0).padStart(11)} | ` +
        `${fmt(median(scavenges.map((s) => s.pauseMs)), 2).padStart(8)} | ${fmt(perTask, 0)}`,
    );
  }
}

main();
