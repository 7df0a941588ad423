import { trace, TraceFlags, type Context, type SpanContext } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace';
import type { AppConfig } from '../config/app-config';

type SamplingConfig = Pick<AppConfig['tracing'], 'sampler' | 'samplerRatio' | 'maxTracesPerSecond'>;

/**
 * How the configured `OTEL_TRACES_SAMPLER` is applied. With a parent-based
 * sampler, a trace that starts here (a request without a valid
 * `traceparent`) is kept or not by `rootRatio`, decided before the SDK is
 * asked: the SDK's own decision comes after it has made the span's ids and
 * cleaned its attributes, which at 1 % cost the 99 % of requests not kept
 * more than the 1 % kept (docs/adr/0048-threads-record-their-spans-an-export-thread-sends-them.md).
 * The SDK then keeps every root it is given, and follows the parent for the rest.
 * Whatever it decides, `cap` bounds the traces kept a second (ADR 0055).
 */
export interface Sampling {
  /** The share of new traces kept, decided by corepool; undefined: the SDK's sampler decides. */
  readonly rootRatio: number | undefined;
  /** The configured sampler, composed with the cap. */
  readonly sampler: Sampler;
  readonly cap: TraceCap;
  /** Whether the configured sampler would keep a span of this parent (undefined: a new trace past `rootRatio`). */
  wouldKeep(parent: SpanContext | undefined): boolean;
}

export function samplingOf(
  config: SamplingConfig,
  cap = new TraceCap(config.maxTracesPerSecond),
): Sampling {
  const { rootRatio, sampler } = configured(config);
  return {
    rootRatio,
    sampler: new CappedSampler(sampler, cap),
    cap,
    wouldKeep: (parent) => wouldKeep(config.sampler, parent),
  };
}

function configured({ sampler, samplerRatio }: SamplingConfig): {
  rootRatio: number | undefined;
  sampler: Sampler;
} {
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

/** `traceidratio` is counted as keeping: what it would decide is the trace id's, not known yet. */
function wouldKeep(sampler: SamplingConfig['sampler'], parent: SpanContext | undefined): boolean {
  switch (sampler) {
    case 'always_off':
      return false;
    case 'always_on':
    case 'traceidratio':
      return true;
    case 'parentbased_always_on':
    case 'parentbased_always_off':
    case 'parentbased_traceidratio':
      return parent === undefined
        ? sampler !== 'parentbased_always_off'
        : (parent.traceFlags & TraceFlags.SAMPLED) !== 0;
  }
}

/**
 * At most `perSecond` traces a second, whatever the sampler and the callers
 * ask: a token bucket holding one second's worth, refilled continuously. A
 * caller that sets the sampled flag on every request is then traced no more
 * than the cap allows (ADR 0055).
 */
export class TraceCap {
  private tokens: number;
  private last: number;
  /** Traces the cap refused, since the process started. */
  capped = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = perSecond;
    this.last = now();
  }

  /** Whether a trace may start now; takes nothing. */
  hasRoom(): boolean {
    this.refill();
    return this.tokens >= 1;
  }

  /** Takes the room of one trace; false, counted, when there is none. */
  take(): boolean {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.capped += 1;
    return false;
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(
      this.perSecond,
      this.tokens + ((now - this.last) * this.perSecond) / 1000,
    );
    this.last = now;
  }
}

/**
 * The configured sampler, then the cap: a span it keeps that begins this
 * process's part of a trace (a root, or the child of a remote parent: a
 * caller's `traceparent`, a job's stored context) takes a trace's room; the
 * children of this process's own spans follow their parent and take none.
 */
export class CappedSampler implements Sampler {
  constructor(
    private readonly inner: Sampler,
    private readonly cap: TraceCap,
  ) {}

  shouldSample(
    context: Context,
    ...rest: DropFirst<Parameters<Sampler['shouldSample']>>
  ): SamplingResult {
    const result = this.inner.shouldSample(context, ...rest);
    if (result.decision !== SamplingDecision.RECORD_AND_SAMPLED) return result;
    const parent = trace.getSpanContext(context);
    if (parent !== undefined && parent.isRemote !== true) return result;
    return this.cap.take() ? result : { decision: SamplingDecision.NOT_RECORD };
  }

  toString(): string {
    return `CappedSampler{${this.inner.toString()}}`;
  }
}

type DropFirst<T extends unknown[]> = T extends [unknown, ...infer Rest] ? Rest : never;
