/** The crowd bench's tasks (`bench/crowd.ts`). */
export type CrowdTask = 'tiny' | 'medium';

/** One server, one task, one crowd size: what the crowd bench measured. */
export interface CrowdCell {
  readonly server: string;
  readonly task: CrowdTask;
  readonly clients: number;
  readonly goodput: number;
  readonly p50: number;
  readonly p99: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly refusals: Record<string, number>;
  readonly livenessP99: number;
}

const ratio = (value: number, peer: number | undefined) =>
  peer === undefined || peer === 0 ? '–' : `${(value / peer).toFixed(2)} ×`;

/** The cells as a Markdown table, each corepool row beside the lean peer's. */
export function crowdTable(cells: readonly CrowdCell[]): string {
  const lean = (cell: CrowdCell) =>
    cells.find((c) => c.server === 'lean' && c.task === cell.task && c.clients === cell.clients);
  const rows = cells.map((cell) => {
    const peer = cell.server === 'lean' ? undefined : lean(cell);
    const refused = Object.entries(cell.refusals)
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ');
    return (
      `| ${cell.server} | ${cell.task} | ${cell.clients.toLocaleString('en')} | ` +
      `${Math.round(cell.goodput).toLocaleString('en')} | ${ratio(cell.goodput, peer?.goodput)} | ` +
      `${cell.p50} / ${cell.p99} ms | ${ratio(cell.p99, peer?.p99)} | ` +
      `${cell.non2xx} | ${cell.errors} / ${cell.timeouts} | ${refused || '0'} | ` +
      `${cell.livenessP99.toFixed(1)} ms | ${ratio(cell.livenessP99, peer?.livenessP99)} |`
    );
  });
  return [
    '| server | task | clients | 2xx/s | × lean | p50 / p99 | p99 × lean | non-2xx | errors / timeouts | refused by reason | liveness p99 | × lean |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
