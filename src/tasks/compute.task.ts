import { defineTask } from '@corepool/core/task';
import { inputSchema, integer } from '@corepool/core/task';

// Math.sin of large arguments dominates. Both bounds at once keep one request to seconds of one
// core and a few hundred MB (ADR 0050 has the measurements).
const MAX_ITERATIONS = 50_000_000;
// The payload's two arrays (filled + mapped) bound its memory.
const MAX_PAYLOAD_SIZE = 10_000_000;

/** Iterations between two progress reports, at least. */
const PROGRESS_SLICE = 1_000_000;
/** Iterations between two checks of the task's cancellation. */
const CANCEL_CHUNK = 65_536;

/** Input of the `compute` task; omitted properties take the defaults. */
export interface ComputeInput {
  iterations: number;
  payloadSize: number;
}

// A default, not optional: an explicit null must fail.
export const computeInput = inputSchema<ComputeInput>('ComputeInput', {
  iterations: integer(
    { minimum: 0, maximum: MAX_ITERATIONS },
    { default: 10_000_000, description: 'Iterations of `result += Math.sqrt(i) * Math.sin(i)`.' },
  ),
  payloadSize: integer(
    { minimum: 0, maximum: MAX_PAYLOAD_SIZE },
    {
      default: 100_000,
      description: 'Length of the array that is allocated, filled with `i` and mapped to `i * 2`.',
    },
  ),
});

/** Result of the `compute` task. */
export interface ComputeOutput {
  computedValue: number;
  processedPayloadLength: number;
}

/**
 * The event-loop-blocking workload of the widely copied worker-threads tutorial:
 * a floating-point loop, then a large array allocated and mapped.
 */
export const computeTask = defineTask<ComputeInput, ComputeOutput>({
  name: 'compute',
  description:
    'Sums Math.sqrt(i) * Math.sin(i) over `iterations`, then builds and maps a `payloadSize`-element array.',
  input: computeInput,
  size: ({ iterations, payloadSize }) => iterations + payloadSize,
  // An iteration costs several times an element of the payload, so the split sets the time
  // per unit: classes by the payload's share of the size, in quarters.
  costClass: ({ iterations, payloadSize }) =>
    `payload-${Math.round((4 * payloadSize) / Math.max(1, iterations + payloadSize))}q`,
  limits: { maxIterations: MAX_ITERATIONS, maxPayloadSize: MAX_PAYLOAD_SIZE },
  run({ iterations, payloadSize }, _body, context) {
    let result = 0;
    // In chunks of 65,536 iterations (milliseconds): between chunks the task checks its
    // cancellation (so it returns within the grace) and reports progress every
    // 1 % or PROGRESS_SLICE iterations. The inner loop stays as tight as a bare one:
    // the check inside it, behind a mask, cost a large share of it (ADR 0050).
    const reportEvery = Math.max(PROGRESS_SLICE, Math.ceil(iterations / 100));
    let nextReport = reportEvery;
    for (let i = 0; i < iterations;) {
      context.throwIfCancelled();
      const end = Math.min(iterations, i + CANCEL_CHUNK);
      for (; i < end; i++) result += Math.sqrt(i) * Math.sin(i);
      if (i >= nextReport || i === iterations) {
        context.progress(i / iterations / 2, `${i} of ${iterations} iterations`);
        nextReport = i + reportEvery;
      }
    }
    context.throwIfCancelled();

    // Really allocate and walk the memory: the point of the workload is the allocation
    // pressure as much as the arithmetic.
    const payload = new Array<number>(payloadSize);
    for (let i = 0; i < payloadSize; i++) payload[i] = i;
    const processed = payload.map((value) => value * 2);
    context.progress(1, 'done');

    return { computedValue: result, processedPayloadLength: processed.length };
  },
});
