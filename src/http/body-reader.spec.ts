import { PassThrough } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { readBody } from './body-reader';

const requestWith = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;

/** Reads `chunks` through `readBody` as a request with these headers would arrive. */
function read(
  headers: Record<string, string>,
  chunks: readonly Buffer[],
  { limit = 1024, error }: { limit?: number; error?: Error } = {},
): Promise<{ error: (Error & { code?: string; statusCode?: number }) | null; body?: Buffer }> {
  return new Promise((resolve) => {
    const payload = new PassThrough();
    readBody(requestWith(headers), payload, limit, (failure, body) =>
      resolve({ error: failure, body }),
    );
    for (const chunk of chunks) payload.write(chunk);
    if (error === undefined) payload.end();
    else payload.destroy(error);
  });
}

const parts = [Buffer.from('hello, '), Buffer.from('wide '), Buffer.from('world')];

describe('readBody', () => {
  it('copies a body of announced length into one buffer of that length', async () => {
    const { error, body } = await read({ 'content-length': '17' }, parts);
    expect(error).toBeNull();
    expect(body?.toString()).toBe('hello, wide world');
    expect(body?.length).toBe(17);
  });

  it('gives a large body a buffer of its own, which a thread can take by transfer', async () => {
    const chunk = Buffer.alloc(64 * 1024, 1);
    const { body } = await read(
      { 'content-length': String(4 * chunk.length) },
      Array(4).fill(chunk),
      {
        limit: 1024 * 1024,
      },
    );
    expect(body?.byteOffset).toBe(0);
    expect(body?.buffer.byteLength).toBe(4 * chunk.length);
    expect(body?.every((byte) => byte === 1)).toBe(true);
  });

  it('joins a chunked body, or a coded one, at its end', async () => {
    const chunked = await read({ 'transfer-encoding': 'chunked' }, parts);
    expect(chunked.body?.toString()).toBe('hello, wide world');
    // A coded body's Content-Length counts the coded bytes, not what the decoder gives.
    const coded = new PassThrough() as PassThrough & { receivedEncodedLength?: number };
    coded.receivedEncodedLength = 9;
    const decoded = await new Promise<Buffer | undefined>((resolve) => {
      readBody(
        requestWith({ 'content-length': '9', 'content-encoding': 'gzip' }),
        coded,
        1024,
        (_error, body) => resolve(body),
      );
      coded.end(Buffer.from('hello, wide world'));
    });
    expect(decoded?.toString()).toBe('hello, wide world');
  });

  it('refuses bytes that do not match Content-Length, fewer or more, as Fastify does', async () => {
    const fewer = await read({ 'content-length': '20' }, parts);
    expect(fewer.error?.code).toBe('FST_ERR_CTP_INVALID_CONTENT_LENGTH');
    expect(fewer.error?.statusCode).toBe(400);
    const more = await read({ 'content-length': '10' }, parts);
    expect(more.error?.code).toBe('FST_ERR_CTP_INVALID_CONTENT_LENGTH');
  });

  it('refuses a body past its limit, announced or as it arrives, with 413', async () => {
    const announced = await read({ 'content-length': '2048' }, []);
    expect(announced.error?.code).toBe('FST_ERR_CTP_BODY_TOO_LARGE');
    expect(announced.error?.statusCode).toBe(413);
    const arriving = await read({ 'transfer-encoding': 'chunked' }, parts, { limit: 10 });
    expect(arriving.error?.code).toBe('FST_ERR_CTP_BODY_TOO_LARGE');
  });

  it("passes a stream's error on, as a client error unless it carries its own status", async () => {
    const plain = await read({ 'transfer-encoding': 'chunked' }, parts, {
      error: new Error('aborted'),
    });
    expect(plain.error?.message).toBe('aborted');
    expect(plain.error?.statusCode).toBe(400);
    const own = Object.assign(new Error('too much'), { statusCode: 503 });
    const kept = await read({ 'transfer-encoding': 'chunked' }, parts, { error: own });
    expect(kept.error?.statusCode).toBe(503);
  });
});
