/**
 * One question each, answered in this process (no server, no load generator):
 *
 *   npm run build && npm run bench:micro -- thread-start   # a thread's start, layer by layer
 *   npm run bench:micro -- pdf-extract                     # one pdf-extract on one core
 *   npm run bench:micro -- labelled-metrics                # the hand-written metric types
 *
 * Each scenario's file in bench/scenarios/ says what it measures and its settings.
 */
import { runScenario } from './lib/scenario-runner';

runScenario('bench:micro', {
  'thread-start': () => import('./scenarios/thread-start'),
  'pdf-extract': () => import('./scenarios/pdf-extract'),
  'labelled-metrics': () => import('./scenarios/labelled-metrics'),
});
