import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { useTaskTracer } from '@corepool/core/host';
import type { Tracing } from './tracing-api';

export type {
  JobRunFacts,
  JobRunTrace,
  JobSubmitTrace,
  RequestSpan,
  ServerRequestFacts,
  SpanDropReason,
  TaskTrace,
  TraceIds,
  Tracing,
  TracingStats,
} from './tracing-api';
export { SPAN_DROP_REASONS } from './tracing-api';

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
  if (active !== undefined) return active;
  for (const warning of config.warnings) logger.warn(warning);
  if (!config.enabled) return undefined;
  const { OtelTracing } = await import('./otel-tracing');
  active = new OtelTracing({ ...config, instanceId: randomUUID() }, logger);
  // The pool asks for a task's spans through its own seam: tracing depends on it, not it on tracing.
  useTaskTracer(active);
  return active;
}

/** Exports the spans still buffered and stops tracing (the app's close). */
export async function stopTracing(): Promise<void> {
  const tracing = active;
  active = undefined;
  useTaskTracer(undefined);
  await tracing?.shutdown();
}
