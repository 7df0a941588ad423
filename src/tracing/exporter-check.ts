import type { AppConfig } from '../config/app-config';

/** The gRPC exporter is an optional dependency (docs/observability.md): installed only where asked for. */
export const GRPC_EXPORTER = '@opentelemetry/exporter-trace-otlp-grpc';

/** Tracing asks for an exporter that is not installed: the process cannot start as configured. */
export class ExporterMissingError extends Error {
  override readonly name = 'ExporterMissingError';
  readonly code = 'OTLP_GRPC_EXPORTER_MISSING';

  constructor() {
    super(
      `OTLP_GRPC_EXPORTER_MISSING: the OTLP protocol grpc needs the optional package ${GRPC_EXPORTER}, which is not installed: install it (npm install ${GRPC_EXPORTER}; the image: --build-arg OTLP_GRPC=true) or choose http/protobuf`,
    );
  }
}

/**
 * Fails at once, before any process is forked, when the configured protocol's exporter
 * is not installed: found by resolving its name, so nothing of it is loaded here.
 */
export function assertExporterInstalled(
  tracing: Pick<AppConfig['tracing'], 'enabled' | 'protocol'>,
  resolve: (id: string) => string = require.resolve,
): void {
  if (!tracing.enabled || tracing.protocol !== 'grpc') return;
  try {
    resolve(GRPC_EXPORTER);
  } catch {
    throw new ExporterMissingError();
  }
}
