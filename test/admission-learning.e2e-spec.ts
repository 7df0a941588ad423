import { postJson, startApp, type RunningApp } from './support/http-app';

jest.setTimeout(120_000);

/** Posts raw bytes to a binary task; resolves with the status and the problem's reason, if any. */
async function postBytes(service: RunningApp, task: string, body: Uint8Array, query = '') {
  const response = await fetch(`${service.url}/api/tasks/${task}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body,
  });
  return outcome(response);
}

async function outcome(response: Response) {
  const body = (await response.json()) as { reason?: string; detail?: string };
  return { status: response.status, reason: body.reason, detail: body.detail };
}

/** The time a refusal's detail says was left: "(… of its own; 1.0 s left)", "(…; 250 ms left)". */
function leftMsIn(detail: string | undefined): number {
  const match = /; (\d+(?:\.\d+)?) (ms|s) left\)/.exec(detail ?? '');
  if (match === null) throw new Error(`no time left in the detail: ${detail}`);
  return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
}

const task = (service: RunningApp, name: string, input: unknown, headers = {}) =>
  postJson(`${service.url}/api/tasks/${name}`, input, headers).then(outcome);

describe('admission that learns (real server, real threads, default settings)', () => {
  describe('a few small inputs never lock larger ones out', () => {
    let service: RunningApp;
    beforeAll(async () => {
      service = await startApp();
    });
    afterAll(async () => {
      await service.close();
    });

    it('admits a 200×200 matrix product after five 2×2 ones, every time', async () => {
      for (let call = 0; call < 5; call++) {
        const small = await task(service, 'matrix-multiply', {
          a: [
            [1, 2],
            [3, 4],
          ],
          b: [
            [5, 6],
            [7, 8],
          ],
        });
        expect(small.status).toBe(200);
      }
      for (let call = 0; call < 8; call++) {
        expect(await task(service, 'matrix-multiply', { size: 200, seed: 7 })).toMatchObject({
          status: 200,
        });
      }
      expect(await task(service, 'matrix-multiply', { size: 400, seed: 7 })).toMatchObject({
        status: 200,
      });
    });

    it('admits a 90 KB hash and JSON document after tiny ones', async () => {
      for (let call = 0; call < 5; call++) {
        expect((await postBytes(service, 'hash', new Uint8Array(4))).status).toBe(200);
        expect((await task(service, 'json-stats', [{ a: 1 }])).status).toBe(200);
      }
      const large = new Uint8Array(90_000).fill(7);
      const document = Array.from({ length: 6000 }, (_, i) => ({ id: i, v: 2 }));
      for (let call = 0; call < 3; call++) {
        expect((await postBytes(service, 'hash', large)).status).toBe(200);
        expect((await task(service, 'json-stats', document)).status).toBe(200);
      }
    });

    it('admits a long compute after short ones', async () => {
      for (let call = 0; call < 5; call++) {
        expect((await task(service, 'compute', { iterations: 10 })).status).toBe(200);
      }
      expect(await task(service, 'compute', { iterations: 3_000_000 })).toMatchObject({
        status: 200,
      });
    });
  });

  describe('a task whose own measured cost is longer than its deadline', () => {
    let service: RunningApp;
    beforeAll(async () => {
      service = await startApp({ POOL_THREADS: '1' });
    });
    afterAll(async () => {
      await service.close();
    });

    it('is refused as too long, with the estimate and the time left, once its size was measured', async () => {
      // The fault task `sleep` takes what it is told; measured three times at 300 ms.
      for (let call = 0; call < 3; call++) {
        expect((await task(service, 'sleep', { ms: 300 })).status).toBe(200);
      }
      const refused = await task(service, 'sleep', { ms: 300 }, { 'x-request-timeout-ms': '100' });
      expect(refused).toMatchObject({ status: 503, reason: 'too-long' });
      expect(refused.detail).toMatch(
        /about \d+ ms of its own as measured at this size; \d+ ms left/,
      );
      // With time enough, the same task runs.
      expect(
        await task(service, 'sleep', { ms: 300 }, { 'x-request-timeout-ms': '2000' }),
      ).toMatchObject({
        status: 200,
      });
    });
  });

  describe('a cold burst', () => {
    let service: RunningApp;
    beforeAll(async () => {
      service = await startApp({ TASK_TIMEOUT_MS: '4000' });
    });
    afterAll(async () => {
      await service.close();
    });

    it('refuses what it cannot finish once its first runs are measured, before the deadline, and lets no admitted task time out', async () => {
      // ~20 s of work for two threads and a 4 s deadline, on a service that has measured nothing.
      const burst = await Promise.all(
        Array.from({ length: 120 }, () => task(service, 'sleep', { ms: 300 })),
      );
      const statuses = new Map<number, number>();
      for (const { status } of burst) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const refused = burst.filter(({ status }) => status === 503);
      expect(refused.length).toBeGreaterThan(0);
      expect(burst.filter(({ status }) => status === 200).length).toBeGreaterThan(0);
      // Every answer is a success or a refusal: none is a 504 after admission.
      expect([...statuses.keys()].sort()).toEqual([200, 503]);
      for (const { reason, detail } of refused) {
        expect(reason === 'deadline' || reason === 'too-long').toBe(true);
        // Refused when the service learnt it could not finish them, not at their deadline:
        // time was left, by the service's own clock (this process's may lag under load).
        expect(leftMsIn(detail)).toBeGreaterThan(0);
      }
    });
  });
});
