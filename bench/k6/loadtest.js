// The worker-threads tutorial's load test, for users who have k6 (https://k6.io):
//
//   k6 run bench/k6/loadtest.js
//   k6 run -e BASE_URL=http://my-host:3000 bench/k6/loadtest.js
//
// Ramps to 50 virtual users in 30 s, to 200 over 1 min, back to 0 in 30 s.
// Each user POSTs /api/compute, checks the status and the duration, sleeps 1 s.
import http from 'k6/http';
import { check, sleep } from 'k6';

const BASE_URL = __ENV.BASE_URL || 'http://localhost:3000';

export const options = {
  stages: [
    { duration: '30s', target: 50 },
    { duration: '1m', target: 200 },
    { duration: '30s', target: 0 },
  ],
};

const body = JSON.stringify({ iterations: 5000000, payloadSize: 10000 });
const params = { headers: { 'Content-Type': 'application/json' } };

export default function () {
  const response = http.post(`${BASE_URL}/api/compute`, body, params);
  check(response, {
    'status is 200': (r) => r.status === 200,
    'duration < 200ms': (r) => r.timings.duration < 200,
  });
  sleep(1);
}
