import type { Transform } from 'node:stream';
import { constants, createBrotliDecompress, createGunzip } from 'node:zlib';
import { Errors } from '../common/app-error';

/** The content codings a request body may arrive in (besides none, `identity`). */
export const ACCEPTED_CONTENT_ENCODINGS = ['gzip', 'br'] as const;

/** zlib's output chunk: each decoded chunk is counted against the limits before the next. */
const DECODED_CHUNK_BYTES = 64 * 1024;

/**
 * A decoder for a request body's `Content-Encoding`, undefined for none, or a
 * 415 for any other coding (a list of codings included): the body is then never
 * read as if its coded bytes were its content. zlib decodes on libuv's threads,
 * not the event loop; what a decoder gives is held to the route's limit as it
 * arrives, so a small body that decodes to gigabytes (a "zip bomb") is cut off
 * at the limit (docs/adr/0015-bodies-refused-while-they-stream.md).
 */
export function bodyDecoder(header: string | string[] | undefined): Transform | undefined {
  const coding = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim().toLowerCase();
  switch (coding) {
    case '':
    case 'identity':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      return createGunzip({ chunkSize: DECODED_CHUNK_BYTES });
    case 'br':
      return createBrotliDecompress({
        chunkSize: DECODED_CHUNK_BYTES,
        params: { [constants.BROTLI_DECODER_PARAM_LARGE_WINDOW]: 0 },
      });
    default:
      throw Errors.unsupportedContentEncoding(coding, ACCEPTED_CONTENT_ENCODINGS);
  }
}
