import { sendMixedRequest } from '../bench/soak';
import { startService, type ServiceProcess } from './support/service-process';

// The soak's mix of real tasks, sustained against the built service as production runs it,
// in a closed loop: each client sends its next request once the last is answered, so the
// load follows what this shared machine gives and no request can be refused for want of
// room. Every answer must be a success. Holding a share of the measured capacity, with its
// latency and memory over time, is `npm run bench:soak`'s (docs/performance.md).

const CLIENTS = 4;
const REQUESTS_PER_CLIENT = 150;
/** Per request; one unanswered after this long counts as an error. */
const REQUEST_TIMEOUT_MS = 30_000;

jest.setTimeout(180_000);

describe('Soak (the mixed load, closed loop)', () => {
  let service: ServiceProcess;
  afterAll(() => service.stop());

  it('answers every request of a sustained mixed load with a success', async () => {
    service = await startService({ LOG_LEVEL: 'warn', TASK_MODULES: '' });
    const outcomes: Record<string, number> = {};
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = 0; i < REQUESTS_PER_CLIENT; i++) {
          const { outcome } = await sendMixedRequest(service.url, next++, REQUEST_TIMEOUT_MS);
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        }
      }),
    );
    console.log(`soak (closed loop): ${JSON.stringify(outcomes)}`);
    expect(outcomes).toEqual({ ok: CLIENTS * REQUESTS_PER_CLIENT });
  });
});
