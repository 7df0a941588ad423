import { TaskCancelledError, type TaskContext } from '@corepool/core/task';
import { TaskInputError } from '@corepool/core/task';
import { checkInflatedSizes } from './pdf-inflate-guard';
import { defineTask } from '@corepool/core/task';
import { inputSchema, integer } from '@corepool/core/task';

// Bounds: a PDF's cost grows with its pages and its text, not its bytes (a small file can
// declare many pages). Text past MAX_TEXT_CHARS is cut (`truncated: true`) so that a result
// stays small enough to keep in a job store.
const MAX_PAGES = 2_000;
const MAX_TEXT_CHARS = 2_000_000;
const PDF_MAGIC = '%PDF-';

/** Query string of the `pdf-extract` task. */
export interface PdfExtractInput {
  maxPages: number;
}

export const pdfExtractInput = inputSchema<PdfExtractInput>('PdfExtractInput', {
  maxPages: integer(
    { minimum: 1, maximum: MAX_PAGES },
    {
      default: MAX_PAGES,
      optional: true,
      description:
        'Extract the text of at most this many pages (metadata always covers the whole file).',
    },
  ),
});

/** Result of the `pdf-extract` task. */
export interface PdfExtractOutput {
  pages: number;
  title: string | null;
  author: string | null;
  subject: string | null;
  creator: string | null;
  producer: string | null;
  /** ISO 8601, when the document states it. */
  creationDate: string | null;
  modificationDate: string | null;
  pdfVersion: string | null;
  /** Text per page, in page order. */
  text: string[];
  truncated: boolean;
}

/**
 * The part of unpdf (pdf.js packaged for servers) this task uses, typed here:
 * unpdf's own declarations are all of pdf.js, which would enter every
 * compilation of the project for these few members.
 */
interface PdfDocument {
  readonly numPages: number;
  readonly loadingTask: { destroy(): Promise<void> };
  getPage(number: number): Promise<{
    getTextContent(): Promise<{ items: ReadonlyArray<{ str?: string; hasEOL?: boolean }> }>;
    cleanup(): boolean;
  }>;
}
interface Unpdf {
  getDocumentProxy: (data: Uint8Array, options?: { verbosity?: number }) => Promise<PdfDocument>;
  getMeta: (pdf: PdfDocument, options?: { parseDates?: boolean }) => Promise<{ info: object }>;
}

let unpdf: Unpdf | undefined;
/** Loaded on first use, so threads start fast and the main thread never loads pdf.js. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadUnpdf = (): Unpdf => (unpdf ??= require('unpdf') as Unpdf);

/** Validates a PDF and extracts its text and metadata (title, author, pages, dates). */
export const pdfExtractTask = defineTask<PdfExtractInput, PdfExtractOutput>({
  name: 'pdf-extract',
  description:
    'Validates a PDF and returns its text per page and its metadata (title, author, pages, dates).',
  input: pdfExtractInput,
  binary: { contentTypes: ['application/pdf'] },
  size: (_input, body) => body?.byteLength ?? 0,
  // The pages read drive the time more than the bytes: classes by maxPages, in powers of four.
  costClass: ({ maxPages }) => `pages-${pagesClassOf(maxPages)}`,
  limits: {
    maxPages: MAX_PAGES,
    maxTextChars: MAX_TEXT_CHARS,
    maxBodyBytes: 'JOBS_MAX_BODY_BYTES / the server body limit',
  },
  async run({ maxPages }, body, context) {
    const bytes = body ?? new Uint8Array(0);
    if (!hasPdfHeader(bytes)) {
      throw new TaskInputError('body is not a PDF (no %PDF- header)', 'body', 'INVALID_DOCUMENT');
    }
    checkInflatedSizes(bytes);
    context.throwIfCancelled();
    const { getDocumentProxy, getMeta } = loadUnpdf();
    // pdf.js takes ownership of the bytes it is given: hand it a copy.
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 }).catch(
      (error: unknown) => {
        throw documentError(error);
      },
    );
    try {
      return await extract(pdf, getMeta, maxPages, context);
    } catch (error) {
      // Whatever pdf.js throws while it reads the pages (a circular page tree, a broken
      // object) is the document's fault, not the task's: 422, never 500.
      if (error instanceof TaskInputError || error instanceof TaskCancelledError) throw error;
      throw documentError(error);
    } finally {
      await pdf.loadingTask.destroy();
    }
  },
});

/** The power of four at or above `maxPages`: 1, 4, 16, … 4096 (the default, 2,000, is in the last). */
export function pagesClassOf(maxPages: number): number {
  let bound = 1;
  while (bound < maxPages) bound *= 4;
  return bound;
}

/** Metadata and the text of at most `maxPages` pages, checking for cancellation between pages. */
async function extract(
  pdf: PdfDocument,
  getMeta: Unpdf['getMeta'],
  maxPages: number,
  context: TaskContext,
): Promise<PdfExtractOutput> {
  const meta = await getMeta(pdf, { parseDates: true });
  const info = meta.info as Record<string, unknown>;
  if (pdf.numPages > MAX_PAGES) {
    throw new TaskInputError(
      `the document has ${pdf.numPages} pages; at most ${MAX_PAGES} are accepted`,
      'body',
      'INVALID_DOCUMENT',
    );
  }
  const text: string[] = [];
  let chars = 0;
  let truncated = false;
  const pagesToRead = Math.min(pdf.numPages, maxPages);
  for (let number = 1; number <= pagesToRead; number++) {
    context.throwIfCancelled();
    const page = await pdf.getPage(number);
    const content = await page.getTextContent();
    let pageText = content.items
      .map((item) => (item.str ?? '') + (item.hasEOL === true ? '\n' : ''))
      .join('');
    if (chars + pageText.length > MAX_TEXT_CHARS) {
      pageText = pageText.slice(0, MAX_TEXT_CHARS - chars);
      truncated = true;
    }
    chars += pageText.length;
    text.push(pageText);
    page.cleanup();
    context.progress(number / pagesToRead, `page ${number} of ${pagesToRead}`);
    if (truncated) break;
  }
  return {
    pages: pdf.numPages,
    title: stringOrNull(info.Title),
    author: stringOrNull(info.Author),
    subject: stringOrNull(info.Subject),
    creator: stringOrNull(info.Creator),
    producer: stringOrNull(info.Producer),
    creationDate: dateOrNull(info.CreationDate),
    modificationDate: dateOrNull(info.ModDate),
    pdfVersion: stringOrNull(info.PDFFormatVersion),
    text,
    truncated: truncated || pdf.numPages > maxPages,
  };
}

/** The header may follow a little junk (readers accept it within the first 1 KiB). */
function hasPdfHeader(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(1024, bytes.byteLength));
  return head.includes(PDF_MAGIC, 0, 'latin1');
}

/** pdf.js names its exceptions: a password is needed, or the structure is broken. */
function documentError(error: unknown): TaskInputError {
  const name = (error as { name?: unknown } | null)?.name;
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'PasswordException') {
    return new TaskInputError(
      'the PDF is encrypted and needs a password to be read',
      'body',
      'DOCUMENT_ENCRYPTED',
    );
  }
  return new TaskInputError(`the PDF cannot be read: ${message}`, 'body', 'INVALID_DOCUMENT');
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function dateOrNull(value: unknown): string | null {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
  return null;
}
