import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { validateInput } from '@corepool/core/host';
import { TaskInputError } from '@corepool/core/task';
import { compressBodyCap, compressInput, compressTask, type CompressInput } from './compress.task';
import * as shared from '../../test/support/task-input';
import { liveContext } from '../../test/support/task-context';

const text = new TextEncoder().encode('corepool compresses this sentence. '.repeat(200));

async function compress(
  plain: Partial<CompressInput>,
  body: Uint8Array | undefined,
): Promise<Uint8Array> {
  return compressTask.run({ format: 'gzip', level: 6, ...plain }, body, liveContext());
}

async function failure(plain: Partial<CompressInput>, body: Uint8Array): Promise<unknown> {
  try {
    await compress(plain, body);
  } catch (error) {
    return error;
  }
  throw new Error('expected compress to fail');
}

const invalidProperties = (query: Record<string, unknown>) =>
  shared.invalidProperties(compressInput, query, 'query');

describe(`${compressTask.name} task`, () => {
  describe('run', () => {
    it('gzips so that gunzip restores the body', async () => {
      const compressed = await compress({ format: 'gzip', level: 6 }, text);

      expect(compressed.byteLength).toBeLessThan(text.byteLength / 10);
      expect(new Uint8Array(gunzipSync(compressed))).toEqual(text);
    });

    it('deflates (zlib format) so that inflate restores the body', async () => {
      const compressed = await compress({ format: 'deflate', level: 9 }, text);

      expect(new Uint8Array(inflateSync(compressed))).toEqual(text);
    });

    it.each([[0], [6], [11]])('compresses with Brotli at quality %i reversibly', async (level) => {
      const compressed = await compress({ format: 'br', level }, text);

      expect(new Uint8Array(brotliDecompressSync(compressed))).toEqual(text);
    });

    it('compresses an empty or missing body', async () => {
      expect(gunzipSync(await compress({}, undefined)).byteLength).toBe(0);
      expect(gunzipSync(await compress({}, new Uint8Array(0))).byteLength).toBe(0);
    });

    it('returns a plain Uint8Array that owns its whole ArrayBuffer, so it can be transferred', async () => {
      const compressed = await compress({}, text);

      expect(Buffer.isBuffer(compressed)).toBe(false);
      expect(compressed.byteOffset).toBe(0);
      expect(compressed.byteLength).toBe(compressed.buffer.byteLength);
    });

    it('refuses a body larger than the cap of a slow level and names a level that would do', async () => {
      const error = await failure({ format: 'gzip', level: 9 }, new Uint8Array(1024 * 1024 + 1));

      expect(error).toBeInstanceOf(TaskInputError);
      expect(error).toMatchObject({
        property: 'level',
        message:
          'gzip level 9 accepts at most 1 MiB; this body has 1048577 bytes: ' +
          'use level 8 or lower, or a smaller body',
      });
    });

    it.each([
      ['gzip', 9, 20, 6],
      ['deflate', 7, 30, 5],
      ['br', 11, 40, 4],
      ['br', 11, 1.5, 10],
    ] as const)(
      'suggests for %s level %i and %p MiB the highest level that fits',
      async (format, level, mib, suggested) => {
        const error = await failure({ format, level }, new Uint8Array(mib * 1024 * 1024));

        expect((error as Error).message).toContain(`use level ${suggested} or lower`);
      },
    );

    it('answers with the content type of the format', () => {
      const contentType = (format: CompressInput['format']) =>
        compressTask.binary?.responseContentType?.({ format, level: 6 });

      expect(contentType('gzip')).toBe('application/gzip');
      expect(contentType('deflate')).toBe('application/zlib');
      expect(contentType('br')).toBe('application/x-brotli');
    });
  });

  describe('body cap of its options', () => {
    const MiB = 1024 * 1024;

    it("is the task's declared cap, known from the options alone", () => {
      expect(compressTask.binary?.bodyCapFor).toBe(compressBodyCap);
    });

    it.each([
      ['gzip', 9, 1 * MiB],
      ['deflate', 8, 2 * MiB],
      ['gzip', 6, 24 * MiB],
      ['br', 11, 1 * MiB],
      ['br', 10, 2 * MiB],
      ['br', 5, 32 * MiB],
    ] as const)('caps %s level %i at %i bytes', (format, level, bytes) => {
      expect(compressBodyCap({ format, level })?.maxBytes).toBe(bytes);
    });

    it.each([
      ['gzip', 1],
      ['gzip', 5],
      ['deflate', 5],
      ['br', 0],
      ['br', 4],
    ] as const)('sets no cap at %s level %i (the server body limit holds)', (format, level) => {
      expect(compressBodyCap({ format, level })).toBeUndefined();
    });

    it('names the option that set it, and a level that takes a body of known size', () => {
      const cap = compressBodyCap({ format: 'br', level: 11 });

      expect(cap?.explain(48 * MiB)).toBe(
        'br level 11 accepts at most 1 MiB; this body has 50331648 bytes: ' +
          'use level 4 or lower, or a smaller body',
      );
      expect(cap?.explain(undefined)).toBe(
        'br level 11 accepts at most 1 MiB; this body is larger: use a lower level ' +
          "(GET /api/tasks lists each level's cap), or a smaller body",
      );
    });

    it('is what the task itself holds a body to when it runs', async () => {
      const cap = compressBodyCap({ format: 'deflate', level: 8 });
      const atCap = new Uint8Array(cap?.maxBytes ?? 0);

      await expect(compress({ format: 'deflate', level: 8 }, atCap)).resolves.toBeInstanceOf(
        Uint8Array,
      );
      const error = await failure(
        { format: 'deflate', level: 8 },
        new Uint8Array(atCap.length + 1),
      );
      expect(error).toMatchObject({ message: cap?.explain(atCap.length + 1), property: 'level' });
    });
  });

  describe('input', () => {
    it('defaults to gzip at level 6', () => {
      expect(validateInput(compressInput, {}, 'query')).toMatchObject({ format: 'gzip', level: 6 });
      expect(invalidProperties({})).toEqual([]);
    });

    it('converts the level from its query-string form', () => {
      const input = validateInput(compressInput, { format: 'br', level: '11' }, 'query');

      expect(input.level).toBe(11);
      expect(invalidProperties({ format: 'br', level: '11' })).toEqual([]);
    });

    it.each([
      ['gzip', '1'],
      ['gzip', '9'],
      ['deflate', '1'],
      ['deflate', '9'],
      ['br', '0'],
      ['br', '11'],
    ])('accepts %s at level %s', (format, level) => {
      expect(invalidProperties({ format, level })).toEqual([]);
    });

    it.each([
      ['gzip', '0'],
      ['gzip', '10'],
      ['deflate', '0'],
      ['br', '12'],
      ['br', '-1'],
      ['gzip', '6.5'],
      ['gzip', 'fast'],
      ['gzip', ['6', '7']],
    ])('rejects %s at level %p', (format, level) => {
      expect(invalidProperties({ format, level })).toEqual(['level']);
    });

    it('explains the level range of the format', () => {
      expect(shared.fieldErrors(compressInput, { format: 'gzip', level: '0' }, 'query')).toEqual({
        level: ['level must be between 1 and 9 for gzip'],
      });
    });

    it.each([['zstd'], ['GZIP'], ['']])('rejects format %p', (format) => {
      expect(invalidProperties({ format })).toEqual(['format']);
    });

    it('rejects unknown query parameters', () => {
      expect(invalidProperties({ quality: '5' })).toEqual(['quality']);
    });
  });
});
