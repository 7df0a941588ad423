import type * as Zlib from 'node:zlib';
import { TaskInputError } from '@corepool/core/task';

let zlib: typeof Zlib | undefined;
/** Loaded on first use, to keep it out of a thread's start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadZlib = (): typeof Zlib => (zlib ??= require('node:zlib') as typeof Zlib);

const MIB = 1024 * 1024;
/** Largest a stream may inflate to: a page's content or a font is rarely past a few MiB. */
export const MAX_STREAM_INFLATED_BYTES = 64 * MIB;
/** Largest all of a document's streams may inflate to together. */
export const MAX_DOCUMENT_INFLATED_BYTES = 256 * MIB;

const STREAM = Buffer.from('stream', 'latin1');
const END_STREAM = Buffer.from('endstream', 'latin1');
/** How far back from `stream` its dictionary is looked for. */
const DICTIONARY_WINDOW = 4096;

/**
 * Refuses a PDF whose Flate streams inflate past the caps, before pdf.js
 * reads it: pdf.js inflates without a bound, and a 4 KB file whose content
 * stream is compressed twice (`/Filter [/FlateDecode /FlateDecode]`)
 * inflates to 2 GiB. Each stream is inflated here by Node's zlib with
 * `maxOutputLength`, layer by layer, so a bomb costs at most the cap in
 * memory and a few milliseconds per MiB before it is refused.
 *
 * Images are skipped (text extraction never decodes them); streams with
 * filters other than Flate after the Flate layers are bounded only by the
 * thread's memory budget (`WORKER_MAX_MEMORY_MB`). A stream that does not
 * inflate cleanly is left for pdf.js to judge.
 */
export function checkInflatedSizes(pdf: Uint8Array): void {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  let documentLeft = MAX_DOCUMENT_INFLATED_BYTES;
  for (let at = bytes.indexOf(STREAM); at !== -1; at = bytes.indexOf(STREAM, at + 1)) {
    // `endstream` contains `stream`; a stream's data starts after its keyword and an end of line.
    if (at >= 3 && bytes.toString('latin1', at - 3, at) === 'end') continue;
    const dataStart = afterEndOfLine(bytes, at + STREAM.length);
    if (dataStart === undefined) continue;
    const layers = flateLayers(bytes.toString('latin1', Math.max(0, at - DICTIONARY_WINDOW), at));
    if (layers === 0) continue;
    const dataEnd = bytes.indexOf(END_STREAM, dataStart);
    if (dataEnd === -1) continue;
    const inflated = inflateLayers(bytes.subarray(dataStart, dataEnd), layers, documentLeft);
    documentLeft -= inflated;
    at = dataEnd + END_STREAM.length - 1;
  }
}

/** The leading FlateDecode filters of the last stream dictionary in `head`; 0 for images. */
function flateLayers(head: string): number {
  const dictionary = head.slice(head.lastIndexOf(' obj') + 1);
  if (/\/Subtype\s*\/Image\b/.test(dictionary)) return 0;
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dictionary)?.[1];
  if (filter === undefined) return 0;
  const names = filter.match(/\/[A-Za-z0-9]+/g) ?? [];
  let layers = 0;
  while (layers < names.length && (names[layers] === '/FlateDecode' || names[layers] === '/Fl')) {
    layers += 1;
  }
  return layers;
}

/** Inflates `layers` times within the caps; returns the bytes of the last layer. */
function inflateLayers(data: Buffer, layers: number, documentLeft: number): number {
  let current = data;
  for (let layer = 0; layer < layers; layer++) {
    const limit = Math.min(MAX_STREAM_INFLATED_BYTES, documentLeft);
    try {
      current = loadZlib().inflateSync(current, { maxOutputLength: limit + 1 });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit);
      // Damaged data: pdf.js decides what it makes of it.
      return current.byteLength;
    }
    if (current.byteLength > limit) throw tooLarge(limit);
  }
  return current.byteLength;
}

function tooLarge(limit: number): TaskInputError {
  const capMib = Math.round(limit / MIB);
  return new TaskInputError(
    `the PDF has a stream that inflates past ${capMib} MiB (at most ${MAX_STREAM_INFLATED_BYTES / MIB} MiB per stream and ${MAX_DOCUMENT_INFLATED_BYTES / MIB} MiB per document are accepted)`,
    'body',
    'INVALID_DOCUMENT',
  );
}

/** The index after `stream`'s end of line (CRLF or LF), or undefined when it is not a keyword. */
function afterEndOfLine(bytes: Buffer, at: number): number | undefined {
  if (bytes[at] === 0x0d && bytes[at + 1] === 0x0a) return at + 2;
  if (bytes[at] === 0x0a) return at + 1;
  if (bytes[at] === 0x0d) return at + 1;
  return undefined;
}
