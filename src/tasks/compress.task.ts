import type * as Zlib from 'node:zlib';
import { TaskInputError } from '@corepool/core/task';
import { defineTask, type BodyCap } from '@corepool/core/task';
import { inputSchema, integer, oneOf, type InputRule } from '@corepool/core/task';

const FORMATS = ['gzip', 'deflate', 'br'] as const;
type CompressionFormat = (typeof FORMATS)[number];

const LEVELS: Readonly<Record<CompressionFormat, { min: number; max: number }>> = {
  gzip: { min: 1, max: 9 },
  deflate: { min: 1, max: 9 },
  br: { min: 0, max: 11 },
};
const DEFAULT_LEVEL = 6;

const MIB = 1024 * 1024;
// The body limit alone does not bound the time: on input crafted for it (random bytes over a
// small alphabet keep the match finders' chains full), the slow levels take seconds per MiB. So
// each slow level caps the body it accepts, at the size whose worst time over such inputs on one
// core stays near the worst case the other tasks share; levels not listed take the whole server
// body limit. ADR 0050 has each cap's measured worst time.
const ZLIB_MAX_BODY_BYTES: Readonly<Record<number, number>> = {
  6: 24 * MIB,
  7: 16 * MIB,
  8: 2 * MIB,
  9: 1 * MIB,
};
const BROTLI_MAX_BODY_BYTES: Readonly<Record<number, number>> = {
  5: 32 * MIB,
  6: 32 * MIB,
  7: 16 * MIB,
  8: 8 * MIB,
  9: 6 * MIB,
  10: 2 * MIB,
  11: 1 * MIB,
};
const MAX_BODY_BYTES: Readonly<Record<CompressionFormat, Readonly<Record<number, number>>>> = {
  gzip: ZLIB_MAX_BODY_BYTES,
  deflate: ZLIB_MAX_BODY_BYTES,
  br: BROTLI_MAX_BODY_BYTES,
};

const BODY_CAPS: Readonly<Record<CompressionFormat, Readonly<Record<number, BodyCap>>>> = {
  gzip: bodyCapsOf('gzip'),
  deflate: bodyCapsOf('deflate'),
  br: bodyCapsOf('br'),
};

const CONTENT_TYPES: Readonly<Record<CompressionFormat, string>> = {
  gzip: 'application/gzip',
  deflate: 'application/zlib',
  br: 'application/x-brotli',
};

let zlib: typeof Zlib | undefined;
/** Loaded on first use, to keep it out of a thread's start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadZlib = (): typeof Zlib => (zlib ??= require('node:zlib') as typeof Zlib);

/** Query string of the `compress` task. */
export interface CompressInput {
  format: CompressionFormat;
  level: number;
}

export const compressInput = inputSchema<CompressInput>('CompressInput', {
  format: oneOf(FORMATS, {
    default: 'gzip',
    description: '`gzip` (RFC 1952), `deflate` (zlib stream, RFC 1950) or `br` (Brotli).',
  }),
  level: integer(
    { minimum: 0, maximum: 11 },
    {
      default: DEFAULT_LEVEL,
      description: 'Compression level: 1–9 for gzip and deflate, 0–11 (quality) for br.',
      rules: [levelFitsFormat],
    },
  ),
});

/** Compresses the raw request body and returns the compressed bytes. */
export const compressTask = defineTask<CompressInput, Uint8Array>({
  name: 'compress',
  description: 'Compresses the raw request body with gzip, deflate (zlib) or Brotli.',
  input: compressInput,
  binary: {
    contentTypes: ['application/octet-stream'],
    output: 'bytes',
    responseContentType: (input) => CONTENT_TYPES[(input as CompressInput).format],
    bodyCapFor: compressBodyCap,
  },
  size: (_input, body) => body?.byteLength ?? 0,
  // The format and level set the time per byte: gzip 9 takes many times gzip 1's.
  costClass: ({ format, level }) => `${format}-${level}`,
  limits: {
    gzipAndDeflateLevels: `${LEVELS.gzip.min}-${LEVELS.gzip.max} (default ${DEFAULT_LEVEL})`,
    brotliLevels: `${LEVELS.br.min}-${LEVELS.br.max} (default ${DEFAULT_LEVEL})`,
    maxBodyBytesByGzipAndDeflateLevel: describeCaps(ZLIB_MAX_BODY_BYTES),
    maxBodyBytesByBrotliLevel: describeCaps(BROTLI_MAX_BODY_BYTES),
  },
  run(input, body, context) {
    const { format, level } = input;
    const data = body ?? new Uint8Array(0);
    // One native call that cannot stop halfway (each level's body cap bounds it):
    // checked before it starts, so a task cancelled on its way does not start it.
    context.throwIfCancelled();
    // The edge refuses such a body before reading it; this holds for bodies that come another way.
    const cap = compressBodyCap(input);
    if (cap !== undefined && data.byteLength > cap.maxBytes) {
      throw new TaskInputError(cap.explain(data.byteLength), 'level');
    }
    const { brotliCompressSync, constants, deflateSync, gzipSync } = loadZlib();
    const compressed =
      format === 'br'
        ? brotliCompressSync(data, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: level,
              [constants.BROTLI_PARAM_SIZE_HINT]: data.byteLength,
            },
          })
        : format === 'gzip'
          ? gzipSync(data, { level })
          : deflateSync(data, { level });
    return ownBuffer(compressed);
  },
});

/** The body cap of a slow level, or undefined for a level that takes the server's body limit. */
export function compressBodyCap({ format, level }: CompressInput): BodyCap | undefined {
  return BODY_CAPS[format][level];
}

function bodyCapsOf(format: CompressionFormat): Record<number, BodyCap> {
  const caps = Object.entries(MAX_BODY_BYTES[format]).map(([level, maxBytes]) => {
    const capped = `${format} level ${level} accepts at most ${formatBytes(maxBytes)}`;
    const cap: BodyCap = {
      maxBytes,
      explain: (bodyBytes) =>
        bodyBytes === undefined
          ? `${capped}; this body is larger: use a lower level (GET /api/tasks lists each ` +
            "level's cap), or a smaller body"
          : `${capped}; this body has ${bodyBytes} bytes: use level ` +
            `${highestLevelFor(format, bodyBytes)} or lower, or a smaller body`,
    };
    return [Number(level), cap] as const;
  });
  return Object.fromEntries(caps);
}

// A small Buffer may be a view into Node's shared 8 KiB pool; copying it into its own
// ArrayBuffer lets the pool transfer the result to the main thread without dragging (or
// detaching) unrelated memory along.
function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? new Uint8Array(bytes.buffer)
    : new Uint8Array(bytes);
}

function highestLevelFor(format: CompressionFormat, bytes: number): number {
  const { min, max } = LEVELS[format];
  for (let level = max; level > min; level--) {
    const cap = MAX_BODY_BYTES[format][level];
    if (cap === undefined || bytes <= cap) return level;
  }
  return min;
}

function formatBytes(bytes: number): string {
  return bytes >= MIB ? `${Math.round((bytes / MIB) * 10) / 10} MiB` : `${bytes} bytes`;
}

function describeCaps(caps: Readonly<Record<number, number>>): string {
  const listed = Object.entries(caps).map(([level, bytes]) => `${level}: ${formatBytes(bytes)}`);
  return `${listed.join(', ')}; other levels: the server body limit`;
}

/** The level's range depends on the format; an unknown format is reported on its own. */
function levelFitsFormat(...[level, input]: Parameters<InputRule>): string | undefined {
  const format = input.format;
  if (typeof format !== 'string' || !Object.hasOwn(LEVELS, format)) return undefined;
  const { min, max } = LEVELS[format as CompressionFormat];
  return typeof level !== 'number' || (level >= min && level <= max)
    ? undefined
    : `$property must be between ${min} and ${max} for ${format}`;
}
