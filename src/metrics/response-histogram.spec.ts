import { Histogram, Registry } from 'prom-client';
import { aggregatedText } from '../../test/support/metrics-text';
import { ResponseHistogram } from './response-histogram';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const NAME = 'http_request_duration_seconds';
const HELP = 'HTTP request duration';

/** The same observations through prom-client's Histogram and through ResponseHistogram. */
function both(observations: ReadonlyArray<[string, string, number, number]>) {
  const reference = new Registry();
  const histogram = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route', 'status_code'],
    buckets: BUCKETS,
    registers: [reference],
  });
  const ours = new Registry();
  const fast = new ResponseHistogram(NAME, HELP, BUCKETS);
  ours.registerMetric(fast.asMetric());
  for (const [method, route, status, seconds] of observations) {
    histogram.observe({ method, route, status_code: String(status) }, seconds);
    fast.observe(method, route, status, seconds);
  }
  return { reference, ours, fast };
}

const OBSERVATIONS: ReadonlyArray<[string, string, number, number]> = [
  ['GET', '/health/live', 200, 0.0004],
  ['GET', '/health/live', 200, 0.001], // on a bound: counted in that bucket (le is "≤")
  ['GET', '/health/live', 200, 0.05],
  ['POST', '/api/tasks/:name', 200, 0.2],
  ['POST', '/api/tasks/:name', 429, 3], // past the last bound: +Inf only
  ['GET', '/health/live', 503, 0],
];

describe('ResponseHistogram', () => {
  it('exposes exactly what prom-client’s Histogram exposes for the same observations', async () => {
    const { reference, ours } = both(OBSERVATIONS);
    const sortLines = (text: string) => text.split('\n').sort().join('\n');
    expect(sortLines(await ours.metrics())).toBe(sortLines(await reference.metrics()));
  });

  it('sums across processes like a prom-client histogram (the cluster aggregation)', async () => {
    const first = both(OBSERVATIONS.slice(0, 3));
    const second = both(OBSERVATIONS.slice(3));
    expect(await aggregatedText([first.ours, second.ours])).toBe(
      await aggregatedText([first.reference, second.reference]),
    );
  });

  it('zeroes every series on reset, and goes on counting in the series its callers keep', async () => {
    const { ours, fast } = both(OBSERVATIONS);
    fast.reset();
    const text = await ours.metrics();
    expect(text).toContain(`${NAME}_count{method="GET",route="/health/live",status_code="200"} 0`);
    expect(text).toContain(
      `${NAME}_bucket{le="+Inf",method="GET",route="/health/live",status_code="200"} 0`,
    );
    fast.observe('GET', '/health/live', 200, 0.002);
    expect(await ours.metrics()).toContain(
      `${NAME}_count{method="GET",route="/health/live",status_code="200"} 1`,
    );
  });
});
