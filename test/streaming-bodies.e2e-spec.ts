import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { brotliCompressSync, brotliDecompressSync, gzipSync } from 'node:zlib';
import { ErrorCode } from '../src/common/error-codes';
import { parseMetrics, sumOf } from './support/metrics-text';
import { waitUntil } from './support/poll';
import { firstBody, rawExchange, statusesOf } from './support/raw-http';
import { startService, type ServiceProcess } from './support/service-process';

jest.setTimeout(120_000);

const MiB = 1024 * 1024;

interface Upload {
  /** Body bytes the server let the client write before it answered and closed. */
  readonly sentBytes: number;
  readonly statuses: number[];
  readonly text: string;
  readonly closed: boolean;
}

/**
 * Sends a request's head, then body chunks as fast as the server reads them,
 * until it answers and closes the connection or `maxBytes` are sent; chunked
 * (no Content-Length) unless the head says otherwise.
 */
function upload(
  port: number,
  head: string,
  {
    chunk = Buffer.alloc(64 * 1024, 0x20),
    maxBytes = 60 * MiB,
    chunked = true,
    // As curl does: stop sending the body once an answer arrives.
    stopOnAnswer = false,
    // Write on after the server's FIN, as a client that reads only once its body is sent.
    allowHalfOpen = false,
  } = {},
): Promise<Upload> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen });
    const received: Buffer[] = [];
    let sentBytes = 0;
    let closed = false;
    const framed = chunked
      ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
      : chunk;
    let answered = false;
    socket.on('data', (data: Buffer) => {
      answered = true;
      received.push(data);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      const text = Buffer.concat(received).toString('latin1');
      resolve({ sentBytes, statuses: statusesOf(text), text, closed });
    });
    socket.once('connect', () => {
      socket.write(head);
      const pump = () => {
        while (!closed && sentBytes < maxBytes && !(stopOnAnswer && answered)) {
          sentBytes += chunk.length;
          if (!socket.write(framed)) return void socket.once('drain', pump);
          // A server that reads as fast as this writes never fills the socket, and this loop would
          // send everything before the answer's 'data' event could run: give it a turn per chunk.
          if (stopOnAnswer) return void setImmediate(pump);
        }
        if (!closed && chunked) socket.write('0\r\n\r\n');
        // Its body sent, a half-open client closes its side: it has nothing more to say.
        if (!closed && allowHalfOpen && sentBytes >= maxBytes) socket.end();
      };
      pump();
    });
  });
}

const chunkedHead = (path: string, contentType: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: ${contentType}\r\ntransfer-encoding: chunked\r\n${extra}\r\n`;

async function metric(service: ServiceProcess, name: string, labels: Record<string, string> = {}) {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  return sumOf(parseMetrics(text), name, labels);
}

describe('Bodies refused while they stream (real process)', () => {
  let service: ServiceProcess;
  const port = () => service.port;

  beforeAll(async () => {
    service = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      LOG_LEVEL: 'warn',
      BINARY_BODY_LIMIT_BYTES: String(4 * MiB),
    });
  });

  afterAll(() => service?.stop());

  it('refuses 20 oversized chunked bodies at once with 413, reading little of them, memory flat', async () => {
    const before = service.rssMiB();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, service.rssMiB())), 20);
    // Half JSON (limit 1 MiB), half raw bytes to a binary task (limit 4 MiB), 60 MiB each.
    const uploads = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        upload(
          port(),
          index % 2 === 0
            ? chunkedHead('/api/tasks/factorial', 'application/json')
            : chunkedHead('/api/tasks/hash', 'application/octet-stream'),
          // The server discards what a client still sends for LINGER_MS after its answer: how much
          // that is depends on the machine's speed, not on where the server stopped reading.
          { stopOnAnswer: true },
        ),
      ),
    );
    clearInterval(sampler);
    for (const { statuses, text, closed } of uploads) {
      expect({ statuses, closed }).toEqual({ statuses: [413], closed: true });
      expect(firstBody(text)).toMatchObject({ code: ErrorCode.PAYLOAD_TOO_LARGE });
    }
    // Answered at the limit: what the client wrote before the answer is the limit plus socket buffers.
    for (const { sentBytes } of uploads) expect(sentBytes).toBeLessThan(30 * MiB);
    // Buffering them whole would hold 20 × 60 MiB; held to their limits, 30 MiB at most.
    expect(peak - before).toBeLessThan(200);
    expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
  });

  it("stops reading a refused body's rest after a bounded amount; a client that keeps writing still gets its answer", async () => {
    // Refused before a byte is read (over the JSON limit), by a client that writes on
    // regardless, as a naive one does: read to its end within the linger, it would all be sent.
    const head = `POST /api/tasks/factorial HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${60 * MiB}\r\n\r\n`;
    const uploads = await Promise.all(
      Array.from({ length: 4 }, () =>
        upload(port(), head, { chunked: false, allowHalfOpen: true }),
      ),
    );
    for (const { statuses, text, closed, sentBytes } of uploads) {
      expect({ statuses, closed }).toEqual({ statuses: [413], closed: true });
      expect(firstBody(text)).toMatchObject({ code: ErrorCode.PAYLOAD_TOO_LARGE });
      // LINGER_BYTES read and dropped, plus what the kernel's socket buffers take.
      expect(sentBytes).toBeLessThan(30 * MiB);
    }
  });

  it('answers Expect: 100-continue with the refusal, before the body is sent, or with 100 once admitted', async () => {
    const expecting = (length: number) =>
      `POST /api/tasks/hash HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: ${length}\r\nexpect: 100-continue\r\n\r\n`;
    const refused = await rawExchange(port(), [expecting(8 * MiB)], { waitMs: 5_000 });
    // A body of a size like the other tests' (the scheduler estimates hashes per byte).
    const content = Buffer.alloc(64 * 1024, 0x61);
    expect(refused.statuses).toEqual([413]);
    const admitted = await new Promise<string>((resolve) => {
      const socket = connect(port(), '127.0.0.1');
      let text = '';
      socket.on('data', (data: Buffer) => {
        text += data.toString('latin1');
        // The body goes only once the service asked for it.
        if (text.startsWith('HTTP/1.1 100 ') && !text.includes('200 OK')) socket.write(content);
        if (text.includes('"digest"')) socket.destroy();
      });
      socket.on('close', () => resolve(text));
      socket.write(expecting(content.length));
    });
    expect(statusesOf(admitted)).toEqual([100, 200]);
  });

  it('answers a body sent to no route 404 ROUTE_NOT_FOUND before reading it, 100-continue or not', async () => {
    const nowhere = '/api/nowhere';
    const expecting = `POST ${nowhere} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n`;
    const refused = await rawExchange(port(), [expecting], { waitMs: 5_000 });
    expect(refused.statuses).toEqual([404]);
    expect(firstBody(refused.text)).toMatchObject({ code: ErrorCode.ROUTE_NOT_FOUND });
    const streamed = await upload(port(), chunkedHead(nowhere, 'application/json'), {
      stopOnAnswer: true,
    });
    expect({ statuses: streamed.statuses, closed: streamed.closed }).toEqual({
      statuses: [404],
      closed: true,
    });
    // Answered from the head: what the client wrote before the answer is socket buffers at most.
    expect(streamed.sentBytes).toBeLessThan(30 * MiB);
  });

  it('415 UNSUPPORTED_MEDIA_TYPE with Accept-Encoding for a coding it does not decode', async () => {
    for (const coding of ['bogus', 'deflate', 'gzip, br', 'compress']) {
      const response = await fetch(`${service.url}/api/tasks/hash`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-encoding': coding },
        body: 'hello',
      });
      expect(response.status).toBe(415);
      expect(response.headers.get('accept-encoding')).toBe('gzip, br');
      expect(await response.json()).toMatchObject({ code: ErrorCode.UNSUPPORTED_MEDIA_TYPE });
    }
  });

  it('hashes the content of a gzip or br body, never its coded bytes', async () => {
    const content = Buffer.from('corepool '.repeat(10_000));
    const digest = createHash('sha256').update(content).digest('hex');
    for (const [coding, coded] of [
      ['gzip', gzipSync(content)],
      ['br', brotliCompressSync(content)],
    ] as const) {
      const response = await fetch(`${service.url}/api/tasks/hash?algorithm=sha256`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-encoding': coding },
        body: coded,
      });
      expect(await response.json()).toMatchObject({
        task: 'hash',
        result: { bytes: content.length, digest },
      });
    }
  });

  it('decodes a gzip JSON body and holds it to the JSON limit once decoded', async () => {
    const ok = await fetch(`${service.url}/api/tasks/factorial`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ n: 10 })),
    });
    expect(ok.status).toBe(200);
    // 2 MiB of spaces compress to a few KiB: the limit is on what they decode to.
    const padded = gzipSync(`${' '.repeat(2 * MiB)}{"n":10}`);
    expect(padded.length).toBeLessThan(64 * 1024);
    const refused = await fetch(`${service.url}/api/tasks/factorial`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: padded,
    });
    expect(refused.status).toBe(413);
  });

  it('400 VALIDATION_FAILED for bytes that are not the coding they claim', async () => {
    const response = await fetch(`${service.url}/api/tasks/hash`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
      body: 'not gzip at all',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: ErrorCode.VALIDATION_FAILED });
  });

  it('cuts a 1 GiB gzip bomb off at the limit, memory flat', async () => {
    // Gzip members may be concatenated: 16 × 64 MiB of zeros is 1 GiB, sent as ~1 MiB.
    const member = gzipSync(Buffer.alloc(64 * MiB), { level: 9 });
    const bomb = Buffer.concat(Array.from({ length: 16 }, () => member));
    expect(bomb.length).toBeLessThan(2 * MiB);
    const before = service.rssMiB();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, service.rssMiB())), 20);
    const answer = await upload(
      port(),
      `POST /api/tasks/hash HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-encoding: gzip\r\ncontent-length: ${bomb.length}\r\n\r\n`,
      { chunk: bomb, maxBytes: bomb.length, chunked: false },
    );
    clearInterval(sampler);
    expect(answer.statuses).toEqual([413]);
    expect(firstBody(answer.text)).toMatchObject({
      code: ErrorCode.PAYLOAD_TOO_LARGE,
      detail: expect.stringContaining(String(4 * MiB)) as unknown,
    });
    expect(peak - before).toBeLessThan(100);
  });
});

describe('Bodies admitted by memory (real process)', () => {
  let service: ServiceProcess;
  const BODY = 8 * MiB;
  const announced = (length: number) =>
    `POST /api/tasks/hash HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: ${length}\r\n\r\n`;

  beforeAll(async () => {
    service = await startService({
      CLUSTER_PROCESSES: '1',
      POOL_THREADS: '1',
      LOG_LEVEL: 'warn',
      BINARY_BODY_LIMIT_BYTES: String(BODY),
      BODY_MEMORY_BUDGET_BYTES: String(2 * BODY),
      // Each scrape here must see what happened just before it.
      METRICS_CACHE_MS: '0',
    });
  });

  afterAll(() => service?.stop());

  /** An upload that sends its head and a little of its body, then holds the connection open. */
  function holdOpen(head: string) {
    const socket = connect(service.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(head);
    socket.write(Buffer.alloc(1024));
    return socket;
  }

  it('503 POOL_SATURATED (memory) at once for bodies past the budget, chunked or not; probes answer', async () => {
    // Two bodies of the limit fill the budget while they arrive.
    const held = [holdOpen(announced(BODY)), holdOpen(announced(BODY))];
    await waitUntil(
      'both bodies to hold the budget',
      async () => (await metric(service, 'compute_body_bytes_held')) === 2 * BODY,
    );
    try {
      const refused = await fetch(`${service.url}/api/tasks/hash`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.alloc(MiB),
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(refused.headers.get('connection')).toBe('close');
      expect(await refused.json()).toMatchObject({
        code: ErrorCode.POOL_SATURATED,
        reason: 'memory',
      });
      // A chunked body announces nothing: it is refused as its first bytes cross the line.
      const chunked = await upload(
        service.port,
        chunkedHead('/api/tasks/hash', 'application/octet-stream'),
      );
      expect(chunked.statuses).toEqual([503]);
      expect(firstBody(chunked.text)).toMatchObject({ reason: 'memory' });
      expect(chunked.sentBytes).toBeLessThan(BODY);
      expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
      expect(await metric(service, 'compute_scheduler_refusals_total', { reason: 'memory' })).toBe(
        2,
      );
      expect(await metric(service, 'compute_body_bytes_held')).toBe(2 * BODY);
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Their bytes are released with their connections: a body of the limit fits again.
    await waitUntil(
      'the budget to be released',
      async () => (await metric(service, 'compute_body_bytes_held')) === 0,
    );
    const accepted = await fetch(`${service.url}/api/tasks/hash`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(BODY),
    });
    expect(accepted.status).toBe(200);
  });
});

describe('Body caps set by the options of a binary task (real process)', () => {
  let service: ServiceProcess;
  const BR_11_CAP = MiB;
  const BIG = 48 * MiB;
  const announcedWithContinue = (path: string, length: number) =>
    `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: ${length}\r\nexpect: 100-continue\r\n\r\n`;

  beforeAll(async () => {
    // The default BINARY_BODY_LIMIT_BYTES (64 MiB): 48 MiB is within it, over br level 11's cap.
    service = await startService({ CLUSTER_PROCESSES: '1', POOL_THREADS: '1', LOG_LEVEL: 'warn' });
  });

  afterAll(() => service?.stop());

  it.each([
    ['/api/tasks/compress?format=br&level=11'],
    ['/api/jobs?task=compress&format=br&level=11'],
  ])(
    '413 for a chunked 48 MiB body to %s, stating the cap, before the server reads it',
    async (path) => {
      const refused = await upload(service.port, chunkedHead(path, 'application/octet-stream'), {
        maxBytes: BIG,
        stopOnAnswer: true,
      });
      expect({ statuses: refused.statuses, closed: refused.closed }).toEqual({
        statuses: [413],
        closed: true,
      });
      expect(firstBody(refused.text)).toMatchObject({
        code: ErrorCode.PAYLOAD_TOO_LARGE,
        limit: BR_11_CAP,
        detail: expect.stringMatching(
          /^br level 11 accepts at most 1 MiB; .*a lower level/,
        ) as unknown,
      });
      // Read whole, the answer would come after all 48 MiB were sent: it came at the cap, plus
      // what the sockets' buffers took in the meantime.
      expect(refused.sentBytes).toBeLessThan(BIG / 2);
    },
  );

  it.each([
    ['/api/tasks/compress?format=br&level=11'],
    ['/api/jobs?task=compress&format=br&level=11'],
  ])('413 for a Content-Length over the cap to %s before any byte is sent', async (path) => {
    // Expect: 100-continue: the client sends its body only once asked for it, and is not.
    const waiting = await rawExchange(service.port, [announcedWithContinue(path, BIG)]);
    expect(waiting.statuses).toEqual([413]);
    expect(firstBody(waiting.text)).toMatchObject({
      code: ErrorCode.PAYLOAD_TOO_LARGE,
      limit: BR_11_CAP,
      detail:
        'br level 11 accepts at most 1 MiB; this body has 50331648 bytes: use level 4 or lower, ' +
        'or a smaller body',
    });
    // Without it: the head alone is answered, and the connection closed.
    const head = `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: ${2 * MiB}\r\n\r\n`;
    const headOnly = await rawExchange(service.port, [head]);
    expect({ statuses: headOnly.statuses, closed: headOnly.closed }).toEqual({
      statuses: [413],
      closed: true,
    });
    expect(firstBody(headOnly.text)).toMatchObject({
      limit: BR_11_CAP,
      detail: expect.stringContaining('use level 10 or lower') as unknown,
    });
  });

  it('400 for options that do not validate, before the body is read', async () => {
    const refused = await upload(
      service.port,
      chunkedHead('/api/tasks/compress?format=gzip&level=10', 'application/octet-stream'),
      { maxBytes: BIG, stopOnAnswer: true },
    );
    expect(refused.statuses).toEqual([400]);
    expect(firstBody(refused.text)).toMatchObject({
      code: ErrorCode.VALIDATION_FAILED,
      errors: [{ property: 'level', messages: ['level must be between 1 and 9 for gzip'] }],
    });
    expect(refused.sentBytes).toBeLessThan(BIG / 2);
    const announced = await rawExchange(service.port, [
      announcedWithContinue('/api/tasks/compress?format=br&level=12', BIG),
    ]);
    expect(announced.statuses).toEqual([400]);
  });

  it('compresses a body at the cap, announced or chunked, and takes a larger one at a level without a cap', async () => {
    const content = Buffer.from(
      'corepool caps bodies by their options. '.repeat(BR_11_CAP / 32),
    ).subarray(0, BR_11_CAP);
    const announced = await fetch(`${service.url}/api/tasks/compress?format=br&level=11`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: content,
    });
    expect(announced.status).toBe(200);
    expect(brotliDecompressSync(Buffer.from(await announced.arrayBuffer())).equals(content)).toBe(
      true,
    );
    // A stream body goes chunked (no Content-Length).
    const chunked = await fetch(`${service.url}/api/tasks/compress?format=br&level=11`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Blob([content]).stream(),
      duplex: 'half',
    });
    expect(chunked.status).toBe(200);
    expect(brotliDecompressSync(Buffer.from(await chunked.arrayBuffer())).equals(content)).toBe(
      true,
    );
    const larger = Buffer.concat([content, content]);
    const uncapped = await fetch(`${service.url}/api/tasks/compress?format=br&level=4`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: larger,
    });
    expect(uncapped.status).toBe(200);
    const job = await fetch(`${service.url}/api/jobs?task=compress&format=br&level=11`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: content,
    });
    expect(job.status).toBe(202);
  });
});
