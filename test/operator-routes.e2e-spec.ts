import { ErrorCode } from '../src/common/error-codes';
import { PROBLEM_CONTENT_TYPE } from '../src/http/problem-details.filter';
import { startApp, type RunningApp } from './support/http-app';
import { parseMetrics, sumOf } from './support/metrics-text';

jest.setTimeout(60_000);

const concurrently = <T>(count: number, request: () => Promise<T>) =>
  Promise.all(Array.from({ length: count }, request));

describe('the detailed health, shared (real server, real threads)', () => {
  let service: RunningApp;

  // A cache longer than the test: every request after the first gathering answers from it.
  beforeAll(async () => {
    service = await startApp({ HEALTH_CACHE_MS: '60000' });
  });
  afterAll(() => service.close());

  it('answers concurrent requests from one gathering', async () => {
    const bodies = await concurrently(50, async () => {
      const response = await fetch(`${service.url}/health`);
      expect(response.status).toBe(200);
      return response.text();
    });
    expect(new Set(bodies).size).toBe(1);
    const metrics = parseMetrics(await (await fetch(`${service.url}/metrics`)).text());
    expect(sumOf(metrics, 'compute_health_gatherings_total')).toBe(1);
  });
});

describe('OPERATOR_REQUESTS_PER_SECOND (real server, real threads)', () => {
  let service: RunningApp;

  beforeAll(async () => {
    service = await startApp({ OPERATOR_REQUESTS_PER_SECOND: '3' });
  });
  afterAll(() => service.close());

  it('refuses a client past its operator quota with 429 RATE_LIMITED, a problem body and Retry-After', async () => {
    const answers = await concurrently(20, async () => {
      const response = await fetch(`${service.url}/metrics`);
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        retryAfter: response.headers.get('retry-after'),
        body: await response.text(),
      };
    });
    const refused = answers.filter((answer) => answer.status === 429);
    const served = answers.filter((answer) => answer.status === 200);
    expect(refused.length + served.length).toBe(20);
    expect(served.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.type).toContain(PROBLEM_CONTENT_TYPE);
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(answer.body)).toMatchObject({
        status: 429,
        code: ErrorCode.RATE_LIMITED,
        detail: expect.stringContaining('operator requests per second'),
      });
    }
  });

  it('never counts the probes or the API', async () => {
    for (const path of ['/health/ready', '/health/live', '/api/tasks']) {
      const statuses = await concurrently(20, async () => {
        return (await fetch(`${service.url}${path}`)).status;
      });
      expect({ path, statuses: new Set(statuses) }).toEqual({ path, statuses: new Set([200]) });
    }
  });
});
