import { randomBytes } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { startApp, type RunningApp } from './support/http-app';

jest.setTimeout(180_000);

/** A request to a built-in task: JSON input, or raw bytes with the options in the query. */
interface Call {
  readonly task: string;
  readonly json?: unknown;
  readonly bytes?: Uint8Array;
  readonly contentType?: string;
  readonly query?: string;
}

async function send(service: RunningApp, call: Call, headers: Record<string, string>) {
  const response = await fetch(`${service.url}/api/tasks/${call.task}${call.query ?? ''}`, {
    method: 'POST',
    headers: {
      'content-type': call.contentType ?? 'application/json',
      ...headers,
    },
    body: call.bytes ?? JSON.stringify(call.json),
  });
  const text = await response.text();
  const reason = response.status === 503 ? (JSON.parse(text) as { reason?: string }).reason : '';
  return { status: response.status, reason };
}

/** Bytes over a two-letter alphabet: the slow zlib levels' worst input (ADR 0050). */
function twoLetters(bytes: number): Uint8Array {
  return randomBytes(bytes).map((byte) => 97 + (byte & 1));
}

async function manyPages(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (let page = 0; page < pages; page++) {
    doc.addPage().drawText(`line of text ${page} `.repeat(8), { x: 50, y: 700, size: 8 });
  }
  return doc.save();
}

/**
 * The poison sequence: one client's dear runs at one size, then a cheap
 * request at that size (another cost class) whose deadline the dear runs'
 * cost would exceed. Before cost classes the model knew the size only, and
 * refused the cheap one `too-long` on an idle pool (ADR 0054).
 */
interface Poison {
  readonly dear: Call;
  readonly cheap: Call;
}

/**
 * The probing requests' deadline, as a share of the fastest dear run seen by
 * the client: a sure floor is refused against it on any machine, and the
 * cheap run (a tenth of the dear one or less) still finishes well inside it.
 */
const DEADLINE_SHARE_OF_DEAR = 0.6;
/**
 * Runs whose slowest is within this many times the fastest, as the client timed them, are
 * within the model's `WIDE_SPREAD` (2) on the thread's clock, with a margin for the HTTP.
 */
const WIDE_ON_THE_CLIENTS_CLOCK = 1.8;

describe('cost classes: dear runs of one class never refuse a cheap request of another (real service, real threads)', () => {
  let service: RunningApp;
  beforeAll(async () => {
    // One thread: two runs make a size class sure, and nothing runs beside the requests.
    service = await startApp({ POOL_THREADS: '1', TASK_TIMEOUT_MS: '30000' });
  });
  afterAll(async () => {
    await service.close();
  });

  const poisons: Record<string, () => Promise<Poison>> = {
    'pdf-extract (maxPages)': async () => {
      const pdf = await manyPages(600);
      const call = { task: 'pdf-extract', bytes: pdf, contentType: 'application/pdf' };
      return { dear: call, cheap: { ...call, query: '?maxPages=1' } };
    },
    'compress (level)': () => {
      const body = twoLetters(512 * 1024);
      const call = { task: 'compress', bytes: body, contentType: 'application/octet-stream' };
      return Promise.resolve({
        dear: { ...call, query: '?format=gzip&level=9' },
        cheap: { ...call, query: '?format=gzip&level=1' },
      });
    },
    'compute (iterations against payload)': () =>
      Promise.resolve({
        // Sizes 8.0 M and 4.2 M: one size class.
        dear: { task: 'compute', json: { iterations: 8_000_000, payloadSize: 0 } },
        cheap: { task: 'compute', json: { iterations: 0, payloadSize: 4_200_000 } },
      }),
  };

  it.each(Object.keys(poisons))(
    '%s: admits the cheap request, from the poisoner and from another client, and answers it in time',
    async (name) => {
      const { dear, cheap } = await (poisons[name] as () => Promise<Poison>)();
      const poisoner = { 'x-client-id': `poisoner-${name.split(' ')[0]}` };
      const victim = { 'x-client-id': `victim-${name.split(' ')[0]}` };
      let fastestDearMs = Infinity;
      let slowestDearMs = 0;
      for (let run = 0; run < 3; run++) {
        const started = performance.now();
        expect(await send(service, dear, poisoner)).toMatchObject({ status: 200 });
        fastestDearMs = Math.min(fastestDearMs, performance.now() - started);
        slowestDearMs = Math.max(slowestDearMs, performance.now() - started);
      }
      const deadlineMs = Math.round(fastestDearMs * DEADLINE_SHARE_OF_DEAR);
      const deadline = { 'x-request-timeout-ms': String(deadlineMs) };
      const dearAgain = await send(service, dear, { ...poisoner, ...deadline });
      // The dear class is measured: the same request with this deadline is refused, unless
      // a busy machine spread its runs so wide (over twice the fastest, ADR 0054) that the
      // model is not sure of it, and then it may run.
      if (slowestDearMs <= WIDE_ON_THE_CLIENTS_CLOCK * fastestDearMs) {
        expect(dearAgain).toEqual({ status: 503, reason: 'too-long' });
      } else {
        expect([200, 503, 504]).toContain(dearAgain.status);
      }
      expect(await send(service, cheap, { ...victim, ...deadline })).toMatchObject({
        status: 200,
      });
      expect(await send(service, cheap, { ...poisoner, ...deadline })).toMatchObject({
        status: 200,
      });
      // Nor are the poisoner's runs the victim's: its request of their class is not refused for
      // them. It runs, and its own deadline stops it if it is as dear.
      const victimDear = await send(service, dear, { ...victim, ...deadline });
      expect([200, 504]).toContain(victimDear.status);
    },
  );
});
