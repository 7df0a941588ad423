import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { crowdTable, type CrowdCell } from './crowd-table';
import { PROBE_TIMEOUT_MS, type Throughput } from './load';
import { ROOT } from './servers';
import {
  checkTarget,
  fmt,
  markdownTable,
  ratio,
  type LatencySummary,
  type TargetResult,
} from './stats';

export interface ConfigResult {
  readonly key: string;
  readonly label: string;
  readonly processes: number;
  readonly threads: number;
  /** Why this configuration has no (or only some) numbers. */
  error?: string;
  light?: Throughput;
  /** The light route server-bound: the server alone on one core, wrk on another (`pinned-load.ts`). */
  lightPinned?: Throughput;
  isolation?: {
    readonly idle: LatencySummary & { readonly timedOut?: number };
    readonly busy: LatencySummary & { readonly timedOut?: number };
    /** The heavy load that kept the threads busy meanwhile. */
    readonly busyLoad: Throughput;
  };
  heavy?: Throughput;
  tiny?: Throughput;
  /**
   * CPU of the event loops (every process's main thread, from /proc) per answered request,
   * in µs, in the round the rate was taken from.
   */
  mainThreadCpuMicros?: { light?: number; lightPinned?: number; tiny?: number };
  hash?: { transfer?: LatencySummary; clone?: LatencySummary };
  /** Lean only: from posting the 32 MiB body to the thread starting on it. */
  hashHandoff?: { transfer: LatencySummary; clone: LatencySummary };
  rss?: {
    readonly beforeMiB: number;
    readonly afterMiB: number;
    readonly requests: number;
    readonly failed: number;
  };
}

export interface BenchReport {
  readonly date: string;
  readonly mode: 'quick' | 'full';
  readonly command: string;
  readonly cores: number;
  readonly cpu: string;
  readonly node: string;
  readonly loadAverage: { readonly before: number; readonly after: number };
  readonly durationSeconds: number;
  readonly settings: Record<string, unknown>;
  readonly singleThread: { readonly perSecond: number; readonly msPerTask: number };
  /** The heavy task on every core at once, plain threads, no HTTP: what the machine delivers. */
  readonly allCores?: { readonly perSecond: number };
  readonly configs: readonly ConfigResult[];
  /** The crowd scenario (`bench/crowd.ts`), run after the configurations. */
  readonly crowd?: readonly CrowdCell[];
}

const find = (report: BenchReport, key: string) => report.configs.find((c) => c.key === key);

/** The ideal heavy throughput: every core running the task at its single-thread rate. */
export const idealPerSecond = (report: BenchReport) => report.cores * report.singleThread.perSecond;

const isolationRatio = (config: ConfigResult | undefined) =>
  ratio(config?.isolation?.busy.p99, config?.isolation?.idle.p99);

const rssGrowth = (config: ConfigResult | undefined) =>
  ratio(config?.rss?.afterMiB, config?.rss?.beforeMiB) - 1;

/** The issue's targets, for the one-process pool and for the cluster. */
export function computeTargets(report: BenchReport): TargetResult[] {
  const lean = find(report, 'lean');
  const bare = find(report, 'bare');
  const targets: TargetResult[] = [];
  for (const key of ['pool', 'cluster']) {
    const c = find(report, key);
    if (c === undefined) continue;
    const name = `${c.processes} × ${c.threads / c.processes}`;
    targets.push(
      checkTarget(`isolation ${name}: busy p99 ÷ idle p99`, isolationRatio(c), 'atMost', 2),
      checkTarget(
        `heavy ${name} ÷ lean`,
        ratio(c.heavy?.perSecond, lean?.heavy?.perSecond),
        'atLeast',
        0.95,
      ),
      checkTarget(
        `heavy ${name} ÷ ideal`,
        ratio(c.heavy?.perSecond, idealPerSecond(report)),
        'atLeast',
        0.85,
      ),
      checkTarget(
        `light route ${name} ÷ bare Fastify`,
        ratio(c.light?.perSecond, bare?.light?.perSecond),
        'atLeast',
        0.8,
      ),
      ...(c.lightPinned === undefined
        ? []
        : [
            checkTarget(
              `light route ${name}, server-bound (pinned, wrk) ÷ bare Fastify`,
              ratio(c.lightPinned.perSecond, bare?.lightPinned?.perSecond),
              'atLeast',
              0.8,
            ),
          ]),
      checkTarget(
        `tiny tasks ${name} ÷ lean`,
        ratio(c.tiny?.perSecond, lean?.tiny?.perSecond),
        'atLeast',
        0.9,
      ),
      checkTarget(
        `main-thread CPU per tiny task ${name} ÷ lean`,
        ratio(c.mainThreadCpuMicros?.tiny, lean?.mainThreadCpuMicros?.tiny),
        'atMost',
        1.3,
      ),
      checkTarget(`RSS growth ${name} over the requests`, rssGrowth(c), 'atMost', 0.1),
    );
  }
  targets.push(
    checkTarget(
      '32 MiB hash (lean): clone time ÷ transfer time',
      ratio(lean?.hash?.clone?.p50, lean?.hash?.transfer?.p50),
      'atLeast',
      1.5,
    ),
  );
  return targets;
}

const ms = (value: number | undefined) => fmt(value, value !== undefined && value < 10 ? 2 : 1);

function showTarget(target: TargetResult): string[] {
  const percent = target.name.startsWith('RSS');
  const value = (v: number) => (percent ? `${fmt(v * 100, 1)} %` : `${fmt(v, 2)}`);
  const sign = target.comparison === 'atLeast' ? '≥' : '≤';
  const met = target.met === undefined ? 'not measured' : target.met ? 'yes' : '**no**';
  return [target.name, value(target.measured), `${sign} ${value(target.goal)}`, met];
}

/** p50 / p99 / max; probes that hit the timeout count at it, so those values are lower bounds. */
function busyCell(busy: LatencySummary & { readonly timedOut?: number }): string {
  const cell = `${ms(busy.p50)} / ${ms(busy.p99)} / ${ms(busy.max)}`;
  const timedOut = busy.timedOut ?? 0;
  return timedOut > 0
    ? `${cell} (${timedOut} of ${busy.samples} timed out at ${ms(PROBE_TIMEOUT_MS)})`
    : cell;
}

/** The report as markdown, without a title (docs/performance.md embeds it under a heading). */
export function renderMarkdown(report: BenchReport): string {
  const ideal = idealPerSecond(report);
  const lines: string[] = [];
  lines.push(
    `Run ${report.date.slice(0, 16).replace('T', ' ')} UTC · ${report.cores} cores (${report.cpu}) · ` +
      `Node ${report.node} · \`${report.command}\` (${report.mode}, ${Math.round(report.durationSeconds)} s) · ` +
      `load average ${fmt(report.loadAverage.before, 2)} before, ${fmt(report.loadAverage.after, 2)} after`,
    '',
    `The load generator (autocannon) runs on the same ${report.cores} cores as the servers. ` +
      `Ideal heavy throughput = ${report.cores} cores × ${fmt(report.singleThread.perSecond, 1)} tasks/s ` +
      `(the task alone on one thread, ${fmt(report.singleThread.msPerTask, 1)} ms each) = ${fmt(ideal, 1)} tasks/s. ` +
      (report.allCores === undefined
        ? ''
        : `Run on all ${report.cores} cores at once by plain threads (no HTTP, nothing else running), ` +
          `the task reaches ${fmt(report.allCores.perSecond, 1)} tasks/s = ${fmt(ratio(report.allCores.perSecond, ideal), 2)} × ideal: ` +
          `the machine's own ceiling.`),
    '',
    markdownTable(['target', 'measured', 'goal', 'met'], computeTargets(report).map(showTarget)),
    '',
  );
  const nest = find(report, 'nest');
  if (nest?.light !== undefined && nest.tiny !== undefined) {
    const bare = find(report, 'bare');
    const lean = find(report, 'lean');
    const pool = find(report, 'pool');
    // Not a target: tells whether a gap is Nest's or corepool's own features'.
    lines.push(
      `Where the gaps come from: Nest minimal (Nest on Fastify + Piscina, none of corepool's features) ` +
        `reaches ${fmt(ratio(nest.light.perSecond, bare?.light?.perSecond), 2)} × bare Fastify on the light route ` +
        `and ${fmt(ratio(nest.tiny.perSecond, lean?.tiny?.perSecond), 2)} × lean on tiny tasks; ` +
        `corepool 1 × ${report.cores} reaches ${fmt(ratio(pool?.light?.perSecond, nest.light.perSecond), 2)} × ` +
        `and ${fmt(ratio(pool?.tiny?.perSecond, nest.tiny.perSecond), 2)} × Nest minimal.`,
      '',
    );
  }

  lines.push(
    markdownTable(
      [
        'configuration',
        'light route req/s',
        'light route req/s, server-bound',
        'probe idle p50 / p99 ms',
        'probe busy p50 / p99 / max ms',
        'busy ÷ idle p99',
        'heavy tasks/s (÷ ideal)',
        'tiny tasks/s',
      ],
      report.configs
        .filter((c) => c.key !== 'poolNice0')
        .map((c) => [
          c.label,
          fmt(c.light?.perSecond),
          fmt(c.lightPinned?.perSecond),
          c.isolation ? `${ms(c.isolation.idle.p50)} / ${ms(c.isolation.idle.p99)}` : '–',
          c.isolation ? busyCell(c.isolation.busy) : '–',
          c.isolation ? `${fmt(isolationRatio(c), 1)} ×` : '–',
          c.heavy
            ? `${fmt(c.heavy.perSecond, 1)} (${fmt(ratio(c.heavy.perSecond, ideal), 2)})`
            : '–',
          fmt(c.tiny?.perSecond),
        ]),
    ),
    '',
  );

  const cpuRows = report.configs.flatMap((c) =>
    c.mainThreadCpuMicros
      ? [
          [
            c.label,
            fmt(c.mainThreadCpuMicros.light),
            fmt(c.mainThreadCpuMicros.lightPinned),
            fmt(c.mainThreadCpuMicros.tiny),
            fmt(
              ratio(c.mainThreadCpuMicros.tiny, find(report, 'lean')?.mainThreadCpuMicros?.tiny),
              2,
            ),
          ],
        ]
      : [],
  );
  lines.push(
    "Main-thread CPU per request: utime + stime of every process's main thread (the event loops, " +
      'worker threads excluded; `/proc/<pid>/task/<pid>/stat`) over the round, ÷ the requests answered in it:',
    '',
    markdownTable(
      [
        'configuration',
        'light route µs/request',
        'light route µs/request, server-bound',
        'tiny task µs/request',
        'tiny ÷ lean',
      ],
      cpuRows,
    ),
    '',
  );

  const hashRows = report.configs.flatMap((c) =>
    (['transfer', 'clone'] as const).flatMap((variant) => {
      const h = c.hash?.[variant];
      const handoff = c.hashHandoff?.[variant];
      return h ? [[c.label, variant, ms(h.p50), ms(h.max), handoff ? ms(handoff.p50) : '–']] : [];
    }),
  );
  lines.push(
    '32 MiB `hash` (sha256), end to end over HTTP, one request at a time:',
    '',
    markdownTable(
      ['configuration', 'body to thread', 'median ms', 'max ms', 'of which handoff ms (median)'],
      hashRows,
    ),
    '',
  );

  const rssRows = report.configs.flatMap((c) =>
    c.rss
      ? [
          [
            c.label,
            fmt(c.rss.beforeMiB, 1),
            fmt(c.rss.afterMiB, 1),
            `${fmt(rssGrowth(c) * 100, 1)} %`,
            `${fmt(c.rss.requests)}${c.rss.failed > 0 ? ` (${c.rss.failed} failed)` : ''}`,
          ],
        ]
      : [],
  );
  lines.push(
    'Memory: RSS of every process of the configuration (threads included), after warm-up and after the light-route requests:',
    '',
    markdownTable(
      ['configuration', 'after warm-up MiB', 'after MiB', 'growth', 'requests'],
      rssRows,
    ),
    '',
  );

  for (const c of report.configs) {
    if (c.error !== undefined) lines.push(`**${c.label} failed:** ${c.error}`, '');
  }

  const niceRows = ['poolNice0', 'pool'].flatMap((key) => {
    const c = find(report, key);
    if (c?.isolation === undefined) return [];
    const { idle, busy } = c.isolation;
    return [
      [
        key === 'pool' ? '19 (default)' : '0',
        ms(idle.p99),
        ms(busy.p50),
        ms(busy.p99),
        ms(busy.max),
        `${fmt(isolationRatio(c), 1)} ×`,
      ],
    ];
  });
  lines.push(
    `Thread priority: the probe on 1 process × ${report.cores} threads, with \`WORKER_NICE_INCREMENT\` 0 and 19 (the default):`,
    '',
    markdownTable(
      [
        'WORKER_NICE_INCREMENT',
        'idle p99 ms',
        'busy p50 ms',
        'busy p99 ms',
        'busy max ms',
        'ratio',
      ],
      niceRows,
    ),
  );
  if (report.crowd !== undefined && report.crowd.length > 0) {
    lines.push(
      '',
      'Crowd: patient keep-alive clients on a tiny and a medium task, no deadline header, beside the lean peer (`npm run bench:crowd` has the scenario):',
      '',
      crowdTable(report.crowd),
    );
  }
  return `${lines.join('\n')}\n`;
}

const TABLE_START = '<!-- bench:results:start -->';
const TABLE_END = '<!-- bench:results:end -->';

/**
 * Where a run is written: its dated note and latest.* go to `resultsDir`, a
 * full run's results table to `performanceDoc`.
 */
export interface ReportPaths {
  readonly root: string;
  readonly resultsDir: string;
  readonly performanceDoc: string;
}

export const REPORT_PATHS: ReportPaths = {
  root: ROOT,
  resultsDir: join(ROOT, 'bench', 'results'),
  performanceDoc: join(ROOT, 'docs', 'performance.md'),
};

/** `2026-11-30-1655-full.md`: sorts by time, and says which kind of run it was (`full`, `jobs`, …). */
export function noteFileName(report: { readonly date: string; readonly mode: string }): string {
  const [day, time] = report.date.split('T') as [string, string];
  return `${day}-${time.slice(0, 5).replace(':', '')}-${report.mode}.md`;
}

/** `doc` with what lies between the results markers replaced by `markdown`; undefined without them. */
export function replaceResultsTable(doc: string, markdown: string): string | undefined {
  const from = doc.indexOf(TABLE_START);
  const to = doc.indexOf(TABLE_END);
  if (from < 0 || to < from) return undefined;
  return `${doc.slice(0, from + TABLE_START.length)}\n\n${markdown}\n${doc.slice(to)}`;
}

/** Formatted as `npm run check` expects, so a fresh run leaves the doc clean. */
async function formatWithPrettier(markdown: string, path: string): Promise<string> {
  // Loaded only when a doc is written: Prettier 3 starts a dynamic import as it loads.
  const prettier = await import('prettier');
  const style = (await prettier.resolveConfig(path)) ?? {};
  return prettier.format(markdown, { ...style, filepath: path });
}

/** The commit measured, `+` when the work tree had changes; undefined outside a git checkout. */
function revision(root: string): string | undefined {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    const commit = git('rev-parse', '--short', 'HEAD').trim();
    return git('status', '--porcelain', '--untracked-files=no').trim() === ''
      ? commit
      : `${commit}+`;
  } catch {
    return undefined;
  }
}

/**
 * Writes the run's dated note, latest.md and latest.json into bench/results/
 * and, for a full run, the results table in docs/performance.md (nothing else
 * in any doc). Returns the paths written, relative to the root.
 */
export async function writeReport(
  report: BenchReport,
  options: {
    readonly updatePerformanceDoc: boolean;
    /** How the updated doc is formatted; Prettier as `npm run check` expects, by default. */
    readonly format?: (markdown: string, path: string) => Promise<string>;
  },
  paths: ReportPaths = REPORT_PATHS,
): Promise<string[]> {
  mkdirSync(paths.resultsDir, { recursive: true });
  const markdown = renderMarkdown(report);
  const commit = revision(paths.root);
  const heading = `# corepool benchmark, ${report.date.slice(0, 16).replace('T', ' ')} UTC (${report.mode})`;
  const note = `${heading}\n\n${commit === undefined ? '' : `Commit \`${commit}\`.\n\n`}${markdown}`;
  const written = [
    join(paths.resultsDir, noteFileName(report)),
    join(paths.resultsDir, 'latest.md'),
    join(paths.resultsDir, 'latest.json'),
  ] as const;
  writeFileSync(written[0], note);
  writeFileSync(written[1], note);
  writeFileSync(
    written[2],
    `${JSON.stringify({ ...report, commit, targets: computeTargets(report) }, null, 2)}\n`,
  );
  const files: string[] = [...written];
  if (options.updatePerformanceDoc) {
    const doc = readFileSync(paths.performanceDoc, 'utf8');
    const updated = replaceResultsTable(doc, markdown);
    if (updated === undefined) {
      throw new Error(`${paths.performanceDoc} has no ${TABLE_START} … ${TABLE_END} markers`);
    }
    const format = options.format ?? formatWithPrettier;
    writeFileSync(paths.performanceDoc, await format(updated, paths.performanceDoc));
    files.push(paths.performanceDoc);
  }
  return files.map((path) => relative(paths.root, path));
}
