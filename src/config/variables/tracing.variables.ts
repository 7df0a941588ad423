import { IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { Type } from '../plain-to-instance';

/** `OTEL_EXPORTER_OTLP_PROTOCOL`: the OTLP transports (OpenTelemetry's standard values). */
export const OTLP_PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** `OTEL_TRACES_SAMPLER`: OpenTelemetry's standard sampler names that corepool supports. */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

/** OpenTelemetry tracing, by its standard `OTEL_*` variables (docs/observability.md). */
export class TracingVariables {
  /**
   * OpenTelemetry (docs/observability.md): the OTLP endpoint traces are sent to, e.g.
   * `http://collector:4318` (HTTP) or `http://collector:4317` (gRPC); HTTP protocols append
   * `/v1/traces`. Unset: no tracing at all — the SDK is not even loaded.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
  })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /**
   * OpenTelemetry: how spans are sent to `OTEL_EXPORTER_OTLP_ENDPOINT`: `http/protobuf`,
   * `http/json` or `grpc`.
   */
  @IsIn(OTLP_PROTOCOLS)
  OTEL_EXPORTER_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';

  /** OpenTelemetry: `true` turns tracing off even with an endpoint set. */
  @IsIn(['true', 'false'])
  OTEL_SDK_DISABLED: 'true' | 'false' = 'false';

  /** OpenTelemetry: the `service.name` of every span. */
  @IsString()
  OTEL_SERVICE_NAME = 'corepool';

  /**
   * OpenTelemetry: which traces are kept: `parentbased_always_on` follows the caller's
   * `traceparent` decision and keeps every trace that starts here; `parentbased_traceidratio` keeps
   * `OTEL_TRACES_SAMPLER_ARG` of them; also `always_on`, `always_off`, `traceidratio`,
   * `parentbased_always_off`.
   */
  @IsIn(TRACE_SAMPLERS)
  OTEL_TRACES_SAMPLER: TraceSampler = 'parentbased_always_on';

  /** OpenTelemetry: the share of traces the `*traceidratio` samplers keep, from 0 to 1. */
  @Type(() => Number)
  @Min(0)
  @Max(1)
  @IsNumber()
  OTEL_TRACES_SAMPLER_ARG = 1;

  /**
   * OpenTelemetry: the longest a finished span waits in this process before it is sent (ms); a full
   * batch goes at once.
   */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_BSP_SCHEDULE_DELAY = 5_000;

  /**
   * OpenTelemetry: extra resource attributes of every span, `key=value` pairs separated by commas
   * (values percent-encoded), e.g. `deployment.environment.name=prod`.
   */
  @Matches(/^(?:[^=,\s]+=[^,]*(?:,[^=,\s]+=[^,]*)*)?$/, {
    message: 'OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas',
  })
  OTEL_RESOURCE_ATTRIBUTES = '';
}
