/**
 * What does one `pdf-extract` cost on one core? Generates invoices with
 * pdf-lib (1 and 10 pages), runs the task directly (as a worker thread does)
 * and prints the first call (pdf.js loading) apart from the steady state.
 *
 *   npm run bench:micro -- pdf-extract
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { pdfExtractTask } from '../../src/tasks/pdf-extract.task';
import { invoicePdf } from '../../test/support/pdf-fixtures';
import { liveContext } from '../../test/support/task-context';

const RUNS = Number(process.env.RUNS ?? 200);

export async function main(): Promise<void> {
  for (const pages of [1, 10]) {
    const lines = Array.from(
      { length: pages },
      (_, page) => `Invoice 42, page ${page + 1}: 12 x widget at 99.95 EUR, total 1199.40 EUR`,
    );
    const pdf = await invoicePdf(lines);
    const first = performance.now();
    await pdfExtractTask.run({ maxPages: 2000 }, new Uint8Array(pdf), liveContext());
    const firstMs = performance.now() - first;
    const start = performance.now();
    for (let i = 0; i < RUNS; i++)
      await pdfExtractTask.run({ maxPages: 2000 }, new Uint8Array(pdf), liveContext());
    const meanMs = (performance.now() - start) / RUNS;
    console.log(
      `${pages} page(s), ${pdf.byteLength} bytes: first call ${firstMs.toFixed(0)} ms, ` +
        `then ${meanMs.toFixed(2)} ms each (${RUNS} runs, ~${Math.round(3_600_000 / meanMs)} per hour per core)`,
    );
  }
}
