import type { InstrumentationScope } from '@opentelemetry/core';
import {
  defaultResource,
  detectResources,
  hostDetector,
  processDetector,
  resourceFromAttributes,
  type Resource,
} from '@opentelemetry/resources';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type * as GrpcExporter from '@opentelemetry/exporter-trace-otlp-grpc';
import type * as JsonExporter from '@opentelemetry/exporter-trace-otlp-http';
import type * as ProtobufExporter from '@opentelemetry/exporter-trace-otlp-proto';
import type { AppConfig } from '../config/app-config';
import { ExporterMissingError, GRPC_EXPORTER } from './exporter-check';

/** The tracing configuration, and what the process adds to it for its export thread. */
export type TracingConfig = AppConfig['tracing'] & {
  /** `service.instance.id`: made once per process, so two pods' processes with the same pid differ. */
  readonly instanceId: string;
};

type HttpOptions = NonNullable<ConstructorParameters<typeof JsonExporter.OTLPTraceExporter>[0]>;
type GrpcOptions = NonNullable<ConstructorParameters<typeof GrpcExporter.OTLPTraceExporter>[0]>;

/** Every span of corepool's is made by one tracer. */
export const SCOPE: InstrumentationScope = { name: 'corepool' };

/**
 * The process every span of this process's comes from: the SDK's own
 * (`telemetry.sdk.*`), its host and process detectors (`host.*`,
 * `process.*`), then `OTEL_RESOURCE_ATTRIBUTES`, then the resolved
 * `service.name` and this process's `service.instance.id`; a later source
 * wins over an earlier one.
 */
export function resourceOf(config: TracingConfig): Resource {
  return defaultResource()
    .merge(detectResources({ detectors: [hostDetector, processDetector] }))
    .merge(
      resourceFromAttributes({
        ...config.resourceAttributes,
        'service.name': config.serviceName,
        'service.instance.id': config.instanceId,
      }),
    );
}

/**
 * The exporter of the configured protocol, to the endpoint as resolved (`src/config/`);
 * each is loaded only when it is the one used (gRPC's is heavy, and optional).
 */
export function exporterFor({
  protocol,
  endpoint,
  headers,
  exportTimeoutMs,
  compression,
}: TracingConfig): SpanExporter {
  // The SDK's enum holds the standard names the configuration was validated against.
  const http: HttpOptions = {
    url: endpoint,
    timeoutMillis: exportTimeoutMs,
    compression: compression as HttpOptions['compression'],
    headers: { ...headers },
  };
  switch (protocol) {
    case 'grpc': {
      const grpc = loadGrpc();
      // gRPC carries headers as metadata, which its exporter reads from OTEL_EXPORTER_OTLP_*HEADERS.
      return new grpc.OTLPTraceExporter({
        url: endpoint,
        timeoutMillis: exportTimeoutMs,
        compression: compression as GrpcOptions['compression'],
      });
    }
    case 'http/json': {
      const json = load<typeof JsonExporter>('@opentelemetry/exporter-trace-otlp-http');
      return new json.OTLPTraceExporter(http);
    }
    case 'http/protobuf': {
      const protobuf = load<typeof ProtobufExporter>('@opentelemetry/exporter-trace-otlp-proto');
      return new protobuf.OTLPTraceExporter(http);
    }
  }
}

function loadGrpc(): typeof GrpcExporter {
  try {
    return load<typeof GrpcExporter>(GRPC_EXPORTER);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') {
      throw new ExporterMissingError();
    }
    throw error;
  }
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = <T>(id: string): T => require(id) as T;
