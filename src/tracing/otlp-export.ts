import type { InstrumentationScope } from '@opentelemetry/core';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type * as GrpcExporter from '@opentelemetry/exporter-trace-otlp-grpc';
import type * as JsonExporter from '@opentelemetry/exporter-trace-otlp-http';
import type * as ProtobufExporter from '@opentelemetry/exporter-trace-otlp-proto';
import type { AppConfig } from '../config/app-config';

export type TracingConfig = AppConfig['tracing'];

/** Every span of corepool's is made by one tracer. */
export const SCOPE: InstrumentationScope = { name: 'corepool' };

/** The process every span of this process's comes from. */
export function resourceOf(config: TracingConfig): Resource {
  return resourceFromAttributes({
    // Which process exported a span: a job's runs may be on another process than its submission.
    'process.pid': process.pid,
    ...config.resourceAttributes,
    'service.name': config.serviceName,
  });
}

/** The exporter of the configured protocol; each is loaded only when it is the one used (gRPC's is heavy). */
export function exporterFor({ protocol, endpoint }: TracingConfig): SpanExporter {
  const base = (endpoint ?? '').replace(/\/+$/, '');
  switch (protocol) {
    case 'grpc': {
      const grpc = load<typeof GrpcExporter>('@opentelemetry/exporter-trace-otlp-grpc');
      return new grpc.OTLPTraceExporter({ url: base });
    }
    case 'http/json': {
      const json = load<typeof JsonExporter>('@opentelemetry/exporter-trace-otlp-http');
      return new json.OTLPTraceExporter({ url: `${base}/v1/traces` });
    }
    case 'http/protobuf': {
      const protobuf = load<typeof ProtobufExporter>('@opentelemetry/exporter-trace-otlp-proto');
      return new protobuf.OTLPTraceExporter({ url: `${base}/v1/traces` });
    }
  }
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = <T>(id: string): T => require(id) as T;
