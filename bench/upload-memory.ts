/**
 * Memory through a burst of big uploads, and after it: 30 concurrent 64 MiB
 * `hash` uploads into 1 process × 2 threads with the Kubernetes manifest's
 * body budget (128 MiB); RSS before, at its peak, and 1, 10, 30 and 60 s
 * after. Issue 16's target: peak within the documented budget, RSS back near
 * its start within a minute.
 *
 *   npx tsx bench/upload-memory.ts ['label:NAME=value,NAME=value' ...]
 *
 * Each argument runs the service once more with those settings, side by side
 * (e.g. `'mmap64k:GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536'`).
 */
import { loadavg } from 'node:os';
import { buildIfNeeded } from './lib/build';
import { fixedAmount } from './lib/load';
import { startService } from './lib/servers';

const MiB = 1024 * 1024;
const AFTER_SECONDS = [1, 10, 30, 60];
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function measure(label: string, settings: Record<string, string>): Promise<string> {
  const service = await startService(label, {
    CLUSTER_WORKERS: '1',
    POOL_THREADS: '2',
    BODY_MEMORY_BUDGET_BYTES: String(128 * MiB),
    LOG_LEVEL: 'warn',
    ...settings,
  });
  try {
    const start = service.rssMiB();
    let peak = start;
    const sampler = setInterval(() => (peak = Math.max(peak, service.rssMiB())), 25);
    const uploads = await fixedAmount(
      {
        url: service.url,
        path: '/api/tasks/hash',
        method: 'POST',
        body: Buffer.alloc(64 * MiB, 7),
        contentType: 'application/octet-stream',
      },
      30,
      30,
    );
    clearInterval(sampler);
    const after: number[] = [];
    let waited = 0;
    for (const seconds of AFTER_SECONDS) {
      await sleep((seconds - waited) * 1000);
      waited = seconds;
      after.push(service.rssMiB());
    }
    const answers = `${uploads.ok} ok, ${uploads.non2xx} refused, ${uploads.errors} errors`;
    const mib = (value: number) => value.toFixed(0);
    return `| ${label} | ${answers} | ${mib(start)} | ${mib(peak)} | ${after.map(mib).join(' / ')} |`;
  } finally {
    await service.stop();
  }
}

function parseVariant(argument: string): [string, Record<string, string>] {
  const colon = argument.indexOf(':');
  const label = colon < 0 ? argument : argument.slice(0, colon);
  const settings = colon < 0 ? '' : argument.slice(colon + 1);
  const pairs = settings
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)];
    });
  return [label, Object.fromEntries(pairs) as Record<string, string>];
}

async function main(): Promise<void> {
  buildIfNeeded((line) => process.stdout.write(`${line}\n`));
  const load = loadavg().map((value) => value.toFixed(2));
  const rows = [];
  for (const [label, settings] of [
    ['defaults', {}],
    ...process.argv.slice(2).map(parseVariant),
  ] as const) {
    rows.push(await measure(label, settings));
  }
  process.stdout.write(
    [
      `# 30 concurrent 64 MiB uploads, ${new Date().toISOString()} (load ${load.join(' ')})`,
      '',
      `| service | answers | RSS before (MiB) | peak | after ${AFTER_SECONDS.join(' / ')} s |`,
      '| --- | --- | --- | --- | --- |',
      ...rows,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
