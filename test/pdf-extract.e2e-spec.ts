import { PDFDocument } from 'pdf-lib';
import { startService, type ServiceProcess } from './support/service-process';
import { waitForJob, type Json } from './support/jobs-client';
import { invoicePdf } from './support/pdf-fixtures';

// pdf-extract's bounds over real HTTP on the built service (docs/tasks.md): `?maxPages=`
// reads at most that many pages and says `truncated`, text past 2,000,000 characters is
// cut, and a document of more than 2,000 pages is refused.

jest.setTimeout(120_000);

/** The task's bounds, as `GET /api/tasks` lists them. */
const MAX_PAGES = 2_000;
const MAX_TEXT_CHARS = 2_000_000;

const PAGES = ['Page one', 'Page two', 'Page three', 'Page four', 'Page five'];

let service: ServiceProcess;

beforeAll(async () => {
  service = await startService({ CLUSTER_PROCESSES: '1', POOL_THREADS: '1', LOG_LEVEL: 'warn' });
});

afterAll(async () => {
  await service?.stop();
});

const extract = (pdf: Uint8Array, query = '') =>
  fetch(`${service.url}/api/tasks/pdf-extract${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/pdf' },
    body: pdf,
  });

async function json(response: Response): Promise<Json> {
  return (await response.json()) as Json;
}

/** What the task returned, from a `POST /api/tasks/pdf-extract` answer. */
async function resultOf(response: Response): Promise<Json> {
  return (await json(response)).result as Json;
}

describe('pdf-extract over HTTP: maxPages and truncation', () => {
  it('lists the bounds this test relies on', async () => {
    const tasks = (await (await fetch(`${service.url}/api/tasks`)).json()) as Json[];
    expect(tasks.find((task) => task.name === 'pdf-extract')?.limits).toMatchObject({
      maxPages: MAX_PAGES,
      maxTextChars: MAX_TEXT_CHARS,
    });
  });

  it('reads every page of a short document, not truncated', async () => {
    const response = await extract(await invoicePdf(PAGES));
    expect(response.status).toBe(200);
    expect(await resultOf(response)).toMatchObject({ pages: 5, text: PAGES, truncated: false });
  });

  it('reads only the first maxPages pages and says truncated; the page count is the whole file', async () => {
    const pdf = await invoicePdf(PAGES);
    const cut = await extract(pdf, '?maxPages=2');
    expect(cut.status).toBe(200);
    expect(await resultOf(cut)).toMatchObject({
      pages: 5,
      text: PAGES.slice(0, 2),
      truncated: true,
    });
    // Exactly as many pages as the file has: nothing left out.
    const whole = await extract(pdf, '?maxPages=5');
    expect(await resultOf(whole)).toMatchObject({ pages: 5, text: PAGES, truncated: false });
  });

  it('takes maxPages for a job too, from the query string', async () => {
    const response = await fetch(`${service.url}/api/jobs?task=pdf-extract&maxPages=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body: await invoicePdf(PAGES),
    });
    expect(response.status).toBe(202);
    const job = await waitForJob(service.url, (await json(response)).id as string);
    expect(job.status).toBe('succeeded');
    expect(job.result.value).toMatchObject({ pages: 5, text: ['Page one'], truncated: true });
  });

  it('refuses maxPages outside 1..2000 with 400 VALIDATION_FAILED', async () => {
    const pdf = await invoicePdf(PAGES);
    for (const maxPages of ['0', String(MAX_PAGES + 1), 'two']) {
      const response = await extract(pdf, `?maxPages=${maxPages}`);
      expect([maxPages, response.status]).toEqual([maxPages, 400]);
      expect((await json(response)).code).toBe('VALIDATION_FAILED');
    }
  });

  it('cuts the text at 2,000,000 characters and says truncated', async () => {
    // Three large pages of 80 lines of 10,000 characters (pdf.js reads only text inside a
    // page): 800,000 characters and more each, so the third is cut part way.
    const line = 'abcdefghij'.repeat(1_000);
    const doc = await PDFDocument.create();
    for (let page = 0; page < 3; page++) {
      doc
        .addPage([14_400, 14_400])
        .drawText(Array(80).fill(line).join('\n'), { x: 10, y: 14_000, size: 1, lineHeight: 2 });
    }
    const response = await extract(await doc.save());
    expect(response.status).toBe(200);
    const result = await resultOf(response);
    const text = result.text as string[];
    expect(result).toMatchObject({ pages: 3, truncated: true });
    expect(text).toHaveLength(3);
    expect(text[0]!.length).toBeGreaterThanOrEqual(800_000);
    expect(text[0]).toContain(line);
    expect(text.join('').length).toBe(MAX_TEXT_CHARS);
    expect(text[2]!.length).toBeLessThan(text[0]!.length);
  });

  it('refuses a document of more than 2,000 pages with 422 INVALID_DOCUMENT, whatever maxPages says', async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i <= MAX_PAGES; i++) doc.addPage([10, 10]);
    const response = await extract(await doc.save(), '?maxPages=1');
    expect(response.status).toBe(422);
    const problem = await json(response);
    expect(problem.code).toBe('INVALID_DOCUMENT');
    expect(problem.detail).toContain(`${MAX_PAGES + 1} pages`);
  });
});
