import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  noteFileName,
  replaceResultsTable,
  writeReport,
  type BenchReport,
  type ReportPaths,
} from './report';

const report: BenchReport = {
  date: '2026-11-30T16:55:42.120Z',
  mode: 'full',
  command: 'npm run bench',
  cores: 2,
  cpu: 'test CPU',
  node: 'v24.22.3',
  loadAverage: { before: 0.5, after: 0.7 },
  durationSeconds: 500,
  settings: {},
  singleThread: { perSecond: 15, msPerTask: 66.7 },
  allCores: { perSecond: 29 },
  configs: [],
};

const DOC = [
  '# Performance',
  '',
  'Intro that a run must keep.',
  '',
  '<!-- bench:results:start -->',
  '',
  'the previous table',
  '',
  '<!-- bench:results:end -->',
  '',
  '## Running it',
  '',
  'Text after the table.',
  '',
].join('\n');

describe('bench report', () => {
  let dir: string;
  let paths: ReportPaths;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'corepool-report-'));
    paths = {
      root: dir,
      resultsDir: join(dir, 'bench', 'results'),
      performanceDoc: join(dir, 'performance.md'),
    };
    writeFileSync(paths.performanceDoc, DOC);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names a run note by its UTC minute and its mode', () => {
    expect(noteFileName(report)).toBe('2026-11-30-1655-full.md');
    expect(noteFileName({ date: '2026-01-02T03:04:05.000Z', mode: 'quick' })).toBe(
      '2026-01-02-0304-quick.md',
    );
  });

  it('replaces only what lies between the results markers', () => {
    const updated = replaceResultsTable(DOC, 'the new table\n');
    expect(updated).toContain('Intro that a run must keep.');
    expect(updated).toContain('the new table');
    expect(updated).not.toContain('the previous table');
    expect(updated).toContain('Text after the table.');
    expect(replaceResultsTable('# no markers\n', 'x')).toBeUndefined();
  });

  it('writes a dated note and latest.* into the results folder, and leaves docs alone on request', async () => {
    const written = await writeReport(report, { updatePerformanceDoc: false }, paths);

    expect(written).toEqual([
      join('bench', 'results', '2026-11-30-1655-full.md'),
      join('bench', 'results', 'latest.md'),
      join('bench', 'results', 'latest.json'),
    ]);
    expect(readdirSync(paths.resultsDir).sort()).toEqual([
      '2026-11-30-1655-full.md',
      'latest.json',
      'latest.md',
    ]);
    const note = readFileSync(join(paths.resultsDir, '2026-11-30-1655-full.md'), 'utf8');
    expect(note).toMatch(/^# corepool benchmark, 2026-11-30 16:55 UTC \(full\)\n/);
    expect(note).toContain('Node v24.22.3');
    expect(readFileSync(join(paths.resultsDir, 'latest.md'), 'utf8')).toBe(note);
    const json = JSON.parse(readFileSync(join(paths.resultsDir, 'latest.json'), 'utf8'));
    expect(json).toMatchObject({ date: report.date, mode: 'full', node: 'v24.22.3' });
    expect(Array.isArray(json.targets)).toBe(true);
    expect(readFileSync(paths.performanceDoc, 'utf8')).toBe(DOC);
  });

  it("updates the performance doc's table, and nothing else in it", async () => {
    // Prettier cannot load inside jest's module sandbox; the formatting step is the identity here.
    const format = (markdown: string) => Promise.resolve(markdown);
    const written = await writeReport(report, { updatePerformanceDoc: true, format }, paths);

    expect(written).toContain('performance.md');
    const doc = readFileSync(paths.performanceDoc, 'utf8');
    expect(doc).not.toContain('the previous table');
    expect(doc).toContain('Run 2026-11-30 16:55 UTC · 2 cores (test CPU) · Node v24.22.3');
    expect(doc.startsWith('# Performance\n\nIntro that a run must keep.\n')).toBe(true);
    expect(doc.endsWith('## Running it\n\nText after the table.\n')).toBe(true);
  });

  it('refuses a performance doc without the markers instead of appending somewhere', async () => {
    writeFileSync(paths.performanceDoc, '# Performance\n');
    await expect(writeReport(report, { updatePerformanceDoc: true }, paths)).rejects.toThrow(
      /no <!-- bench:results:start -->/,
    );
  });
});
