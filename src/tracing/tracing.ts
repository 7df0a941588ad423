import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import type { Tracing } from './tracing-api';

export type {
  JobRunFacts,
  JobRunTrace,
  JobSubmitTrace,
  RequestSpan,
  TaskTrace,
  TraceIds,
  Tracing,
} from './tracing-api';

let active: Tracing | undefined;

/** The process's tracing, when it is on. */
export const activeTracing = (): Tracing | undefined => active;

/**
 * Starts tracing when the configuration asks for it, loading the SDK then
 * and only then (ADR 0048). Each process starts its own: the cluster's
 * HTTP processes each export their spans.
 */
export async function startTracing(
  config: AppConfig['tracing'],
  logger: Logger,
): Promise<Tracing | undefined> {
  if (!config.enabled || active !== undefined) return active;
  const { OtelTracing } = await import('./otel-tracing');
  active = new OtelTracing(config, logger);
  return active;
}

/** Exports the spans still buffered and stops tracing (the app's close). */
export async function stopTracing(): Promise<void> {
  const tracing = active;
  active = undefined;
  await tracing?.shutdown();
}
