import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { AppConfig } from '../config/app-config';

/**
 * How the configured `OTEL_TRACES_SAMPLER` is applied. With a parent-based
 * sampler, a trace that starts here (a request without a valid
 * `traceparent`) is kept or not by `rootRatio`, decided before the SDK is
 * asked: the SDK's own decision comes after it has made the span's ids and
 * cleaned its attributes, which at 1 % cost the 99 % of requests not kept
 * more than the 1 % kept (docs/adr/0048-threads-record-their-spans-an-export-thread-sends-them.md).
 * The SDK then keeps every root it is given, and follows the parent for the rest.
 */
export interface Sampling {
  /** The share of new traces kept, decided by corepool; undefined: the SDK's sampler decides. */
  readonly rootRatio: number | undefined;
  readonly sampler: Sampler;
}

export function samplingOf({
  sampler,
  samplerRatio,
}: Pick<AppConfig['tracing'], 'sampler' | 'samplerRatio'>): Sampling {
  switch (sampler) {
    case 'always_on':
      return { rootRatio: undefined, sampler: new AlwaysOnSampler() };
    case 'always_off':
      return { rootRatio: 0, sampler: new AlwaysOffSampler() };
    // Every span is decided by its trace id, its parent's decision ignored: left to the SDK.
    case 'traceidratio':
      return { rootRatio: undefined, sampler: new TraceIdRatioBasedSampler(samplerRatio) };
    case 'parentbased_always_on':
      return { rootRatio: undefined, sampler: parentBased(new AlwaysOnSampler()) };
    case 'parentbased_always_off':
      return { rootRatio: 0, sampler: parentBased(new AlwaysOffSampler()) };
    case 'parentbased_traceidratio':
      return { rootRatio: samplerRatio, sampler: parentBased(new AlwaysOnSampler()) };
  }
}

const parentBased = (root: Sampler) => new ParentBasedSampler({ root });
