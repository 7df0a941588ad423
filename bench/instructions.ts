/**
 * Instructions, counted by valgrind's callgrind: the same count run after run, whatever
 * else the machine does, where times on a shared 2-core machine vary by a third
 * (ADR 0025). Each scenario's file in bench/scenarios/ says how it counts.
 *
 *   npm run build && npm run bench:instructions -- light [--tiny] [--before=<checkout>]… \
 *     [--variant=NAME=VALUE,…] [--skip=<key>]
 *   npm run build && npm run bench:instructions -- jobs [--before=<checkout>]…
 *
 * `light`: per light request (`GET /health/live`), or per tiny task with `--tiny`, beside
 * bare Fastify and Nest minimal; `jobs`: per job (submit, claim, run, finish).
 */
import { runScenario } from './lib/scenario-runner';

runScenario('bench:instructions', {
  light: () => import('./scenarios/light-instructions'),
  jobs: () => import('./scenarios/job-instructions'),
});
