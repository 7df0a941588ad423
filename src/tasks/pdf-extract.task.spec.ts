import { AppError } from '../common/app-error';
import { WorkerPoolService } from '@corepool/nestjs';
import { poolOptionsFrom } from '../workers/pool-options';
import { MAX_STREAM_INFLATED_BYTES } from './pdf-inflate-guard';
import { testConfig } from '../../test/support/test-config';
import { circularPageTreePdf, inflationBombPdf, invoicePdf } from '../../test/support/pdf-fixtures';

jest.setTimeout(60_000);

// pdf.js loads through a dynamic import that jest's module sandbox refuses: the task runs
// where it runs in production, on a worker thread.
let pool: WorkerPoolService;

beforeAll(async () => {
  const config = testConfig({ POOL_THREADS: '1' });
  pool = new WorkerPoolService(poolOptionsFrom(config));
  await pool.start();
});

afterAll(async () => {
  await pool.close(1_000);
});

const extract = (pdf: Uint8Array) => pool.run('pdf-extract', { maxPages: 2_000 }, { body: pdf });

async function errorOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof AppError) return error;
  throw new Error(`expected an AppError, got ${String(error)}`);
}

describe('pdf-extract', () => {
  it('returns the text of each page and the metadata', async () => {
    const { value } = await extract(await invoicePdf(['Total due: 12.50 EUR', 'Page two']));
    expect(value).toMatchObject({ pages: 2, title: 'Invoice 42', author: 'ACME Payments' });
    expect((value as { text: string[] }).text[0]).toContain('Total due: 12.50 EUR');
  });

  it('refuses a 5 KB PDF whose stream inflates to 2 GiB with INVALID_DOCUMENT, and its thread lives on', async () => {
    const bomb = inflationBombPdf(2048);
    expect(bomb.byteLength).toBeLessThan(8 * 1024);
    const before = pool.stats().threadRestarts;
    const error = await errorOf(extract(bomb));
    expect(error.code).toBe('INVALID_DOCUMENT');
    expect(error.detail).toContain(`${MAX_STREAM_INFLATED_BYTES / 1024 / 1024} MiB`);
    expect(pool.stats().threadRestarts).toBe(before);
  });

  it('reads a PDF whose streams inflate within the cap', async () => {
    // 16 MiB of zeros as page content: no text, but nothing refused.
    const { value } = await extract(inflationBombPdf(16));
    expect(value).toMatchObject({ pages: 1, text: [''] });
  });

  it('answers INVALID_DOCUMENT for a circular page tree', async () => {
    expect((await errorOf(extract(circularPageTreePdf()))).code).toBe('INVALID_DOCUMENT');
  });

  it('answers INVALID_DOCUMENT for bytes that only start like a PDF', async () => {
    const broken = Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R >>\nendobj\n');
    expect((await errorOf(extract(broken))).code).toBe('INVALID_DOCUMENT');
  });
});
