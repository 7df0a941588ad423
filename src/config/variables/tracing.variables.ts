import { IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { Transform, Type } from '../plain-to-instance';

/** `OTEL_EXPORTER_OTLP_PROTOCOL`: the OTLP transports (OpenTelemetry's standard values). */
export const OTLP_PROTOCOLS = ['grpc', 'http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** `OTEL_EXPORTER_OTLP_COMPRESSION`: OpenTelemetry's standard values. */
export const OTLP_COMPRESSIONS = ['gzip', 'none'] as const;
export type OtlpCompression = (typeof OTLP_COMPRESSIONS)[number];

/** `OTEL_TRACES_EXPORTER`: the standard values corepool supports. */
export const TRACE_EXPORTERS = ['otlp', 'none'] as const;
export type TraceExporter = (typeof TRACE_EXPORTERS)[number];

/** `OTEL_PROPAGATORS`: the W3C formats corepool reads and writes (`none` is the empty list). */
export const PROPAGATORS = ['tracecontext', 'baggage'] as const;
export type Propagator = (typeof PROPAGATORS)[number];

/** `OTEL_LOG_LEVEL`: the SDK's diagnostic levels. */
export const OTEL_LOG_LEVELS = [
  'none',
  'error',
  'warn',
  'info',
  'debug',
  'verbose',
  'all',
] as const;
export type OtelLogLevel = (typeof OTEL_LOG_LEVELS)[number];

/**
 * OpenTelemetry's `key=value,key=value` lists (`OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_EXPORTER_OTLP_HEADERS`).
 */
const KEY_VALUE_LIST = /^(?:\s*[^=,\s]+\s*=[^,]*(?:,\s*[^=,\s]+\s*=[^,]*)*)?$/;

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
   * OpenTelemetry (docs/observability.md): the OTLP base endpoint, e.g. `http://collector:4318`
   * (HTTP) or `http://collector:4317` (gRPC); the HTTP protocols append `/v1/traces`, gRPC uses it
   * as it is. Set it or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` to turn tracing on; neither set: no
   * tracing at all — the SDK is not even loaded.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
  })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /**
   * OpenTelemetry: the endpoint of traces alone, used exactly as written (no path appended); takes
   * precedence over `OTEL_EXPORTER_OTLP_ENDPOINT`.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL',
  })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  /**
   * OpenTelemetry: how spans are sent: `http/protobuf`, `http/json` or `grpc` (gRPC needs the
   * optional package `@opentelemetry/exporter-trace-otlp-grpc`, see docs/observability.md).
   */
  @IsIn(OTLP_PROTOCOLS)
  OTEL_EXPORTER_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';

  /**
   * OpenTelemetry: the protocol of traces alone; takes precedence over
   * `OTEL_EXPORTER_OTLP_PROTOCOL`.
   */
  @IsOptional()
  @IsIn(OTLP_PROTOCOLS)
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: OtlpProtocol;

  /**
   * OpenTelemetry: headers sent with every export, `key=value` pairs separated by commas (values
   * percent-encoded), e.g. an authorization token.
   */
  @IsOptional()
  @Matches(KEY_VALUE_LIST, {
    message: 'OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas',
  })
  OTEL_EXPORTER_OTLP_HEADERS?: string;

  /**
   * OpenTelemetry: headers of trace exports alone; a key set here wins over the same key in
   * `OTEL_EXPORTER_OTLP_HEADERS`.
   */
  @IsOptional()
  @Matches(KEY_VALUE_LIST, {
    message: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS must be key=value pairs separated by commas',
  })
  OTEL_EXPORTER_OTLP_TRACES_HEADERS?: string;

  /** OpenTelemetry: longest one export may take, retries included (ms). */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_EXPORTER_OTLP_TIMEOUT = 10_000;

  /**
   * OpenTelemetry: the export timeout of traces alone (ms); takes precedence over
   * `OTEL_EXPORTER_OTLP_TIMEOUT`.
   */
  @IsOptional()
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?: number;

  /** OpenTelemetry: `gzip` compresses every export; `none` sends it as it is. */
  @IsIn(OTLP_COMPRESSIONS)
  OTEL_EXPORTER_OTLP_COMPRESSION: OtlpCompression = 'none';

  /**
   * OpenTelemetry: the compression of traces alone; takes precedence over
   * `OTEL_EXPORTER_OTLP_COMPRESSION`.
   */
  @IsOptional()
  @IsIn(OTLP_COMPRESSIONS)
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION?: OtlpCompression;

  /**
   * OpenTelemetry: a PEM file of the certificates that verify the collector's TLS certificate; read
   * by the OTLP exporter itself, `OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE` first.
   */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_CERTIFICATE?: string;

  /** OpenTelemetry: the same, for traces alone. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE?: string;

  /**
   * OpenTelemetry: a PEM file of the client certificate chain for mutual TLS; read by the OTLP
   * exporter itself, `OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE` first.
   */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE?: string;

  /** OpenTelemetry: the same, for traces alone. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE?: string;

  /**
   * OpenTelemetry: a PEM file of the client private key for mutual TLS; read by the OTLP exporter
   * itself, `OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY` first.
   */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_CLIENT_KEY?: string;

  /** OpenTelemetry: the same, for traces alone. */
  @IsOptional()
  @IsString()
  OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY?: string;

  /** OpenTelemetry: `otlp` exports traces; `none` turns tracing off, as if no endpoint were set. */
  @IsIn(TRACE_EXPORTERS)
  OTEL_TRACES_EXPORTER: TraceExporter = 'otlp';

  /**
   * OpenTelemetry: `true` (any case) turns tracing off even with an endpoint set; any other value
   * reads as false, and a value other than `false` is logged as a warning.
   */
  @IsOptional()
  @IsString()
  OTEL_SDK_DISABLED?: string;

  /**
   * OpenTelemetry: the `service.name` of every span; takes precedence over a `service.name` in
   * `OTEL_RESOURCE_ATTRIBUTES`. Neither set: `corepool`.
   */
  @IsOptional()
  @IsString()
  OTEL_SERVICE_NAME?: string;

  /**
   * OpenTelemetry: which traces are kept: `parentbased_always_on` follows the caller's
   * `traceparent` decision and keeps every trace that starts here; `parentbased_traceidratio` keeps
   * `OTEL_TRACES_SAMPLER_ARG` of them; also `always_on`, `always_off`, `traceidratio`,
   * `parentbased_always_off`. Whatever it decides, at most `TRACING_MAX_TRACES_PER_SECOND` traces a
   * second are kept.
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
   * Most traces a process starts or continues a second, whatever the sampler or the callers'
   * `traceparent` flags ask (a token bucket, one second's worth of burst); the rest are not
   * recorded and counted in `compute_tracing_traces_capped_total`.
   */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  TRACING_MAX_TRACES_PER_SECOND = 100;

  /**
   * OpenTelemetry: the context formats read from requests and stored with jobs, comma-separated:
   * `tracecontext` (W3C `traceparent`/`tracestate`), `baggage` (W3C `baggage`), or `none`. Other
   * values are ignored with a warning.
   */
  @IsString()
  OTEL_PROPAGATORS = 'tracecontext,baggage';

  /**
   * OpenTelemetry: the longest a finished span waits in this process before it is sent (ms); a full
   * batch goes at once.
   */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_BSP_SCHEDULE_DELAY = 5_000;

  /** OpenTelemetry: the longest the batch processor waits for one export (ms). */
  @Type(() => Number)
  @Min(1)
  @Max(600_000)
  @IsInt()
  OTEL_BSP_EXPORT_TIMEOUT = 30_000;

  /**
   * OpenTelemetry: most finished spans a process holds for export, queued or being sent; past it,
   * spans are dropped and counted in `compute_tracing_spans_dropped_total`.
   */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  OTEL_BSP_MAX_QUEUE_SIZE = 2_048;

  /** OpenTelemetry: most spans in one export; at most `OTEL_BSP_MAX_QUEUE_SIZE`. */
  @Type(() => Number)
  @Min(1)
  @Max(1_000_000)
  @IsInt()
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE = 512;

  /**
   * OpenTelemetry: longest attribute value (characters), of spans, events and links; unset: no
   * limit.
   */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT?: number;

  /** OpenTelemetry: most attributes of a span, event or link. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_ATTRIBUTE_COUNT_LIMIT = 128;

  /** OpenTelemetry: longest span attribute value; unset: `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT?: number;

  /** OpenTelemetry: most attributes of a span; unset: `OTEL_ATTRIBUTE_COUNT_LIMIT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT?: number;

  /** OpenTelemetry: most events of a span. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_SPAN_EVENT_COUNT_LIMIT = 128;

  /** OpenTelemetry: most links of a span. */
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_SPAN_LINK_COUNT_LIMIT = 128;

  /** OpenTelemetry: most attributes of a span event; unset: `OTEL_ATTRIBUTE_COUNT_LIMIT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT?: number;

  /** OpenTelemetry: most attributes of a span link; unset: `OTEL_ATTRIBUTE_COUNT_LIMIT`. */
  @IsOptional()
  @Type(() => Number)
  @Min(0)
  @IsInt()
  OTEL_LINK_ATTRIBUTE_COUNT_LIMIT?: number;

  /**
   * OpenTelemetry: extra resource attributes of every span, `key=value` pairs separated by commas
   * (values percent-encoded), e.g. `deployment.environment.name=prod`.
   */
  @Matches(KEY_VALUE_LIST, {
    message: 'OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas',
  })
  OTEL_RESOURCE_ATTRIBUTES = '';

  /**
   * OpenTelemetry: the level of the SDK's own diagnostics (`none`, `error`, `warn`, `info`,
   * `debug`, `verbose`, `all`, any case), written to the log; export failures are warnings, at most
   * one a minute.
   */
  @Transform(({ value }) => value.toLowerCase())
  @IsIn(OTEL_LOG_LEVELS)
  OTEL_LOG_LEVEL: OtelLogLevel = 'info';
}
