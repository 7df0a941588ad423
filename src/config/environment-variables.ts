import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';
import { AuthVariables } from './variables/auth.variables';
import { ClusterVariables } from './variables/cluster.variables';
import { HttpVariables } from './variables/http.variables';
import { JobsVariables } from './variables/jobs.variables';
import { LifecycleVariables } from './variables/lifecycle.variables';
import { MemoryVariables } from './variables/memory.variables';
import { PoolVariables } from './variables/pool.variables';
import { SchedulerVariables } from './variables/scheduler.variables';
import { ServerVariables } from './variables/server.variables';
import { TracingVariables } from './variables/tracing.variables';

export { AUTH_MODES, type AuthMode } from './variables/auth.variables';
export {
  CLUSTER_SCHEDULING_POLICIES,
  type ClusterSchedulingPolicy,
} from './variables/cluster.variables';
export { LOG_LEVELS, type LogLevel } from './variables/server.variables';
export {
  OTEL_LOG_LEVELS,
  OTLP_COMPRESSIONS,
  OTLP_PROTOCOLS,
  PROPAGATORS,
  TRACE_EXPORTERS,
  TRACE_SAMPLERS,
  type OtelLogLevel,
  type OtlpCompression,
  type OtlpProtocol,
  type Propagator,
  type TraceExporter,
  type TraceSampler,
} from './variables/tracing.variables';

/**
 * The variables by area, one class each in ./variables/, in the order docs/configuration.md
 * lists them. A new variable goes into its area's class; a new area into this list.
 */
export const VARIABLE_GROUPS = [
  ServerVariables,
  ClusterVariables,
  PoolVariables,
  SchedulerVariables,
  MemoryVariables,
  HttpVariables,
  AuthVariables,
  LifecycleVariables,
  JobsVariables,
  TracingVariables,
] as const;

export type VariableGroup = (typeof VARIABLE_GROUPS)[number];

/**
 * The raw environment, one property per variable: every area's class together.
 *
 * Validation stops at a variable's first failed rule. Decorators apply
 * bottom-up, so the type check sits nearest the property: `PORT=eighty` is
 * reported as not a number, not as out of range.
 *
 * docs/configuration.md is generated from the area classes (`npm run docs:config`):
 * each doc comment is the variable's description there, and a test fails when the
 * two differ. Property initializers are the defaults. Every variable is validated
 * at once, so a bad environment is reported whole, not one variable per restart.
 */
export interface EnvironmentVariables
  extends
    ServerVariables,
    ClusterVariables,
    PoolVariables,
    SchedulerVariables,
    MemoryVariables,
    HttpVariables,
    AuthVariables,
    LifecycleVariables,
    JobsVariables,
    TracingVariables {}

/** Every variable at its default (`new EnvironmentVariables().PORT`); optional ones unset. */
export const EnvironmentVariables = class {
  constructor() {
    for (const Group of VARIABLE_GROUPS) Object.assign(this, new Group());
  }
} as new () => EnvironmentVariables;

/**
 * The variables an area's class declares, optional ones included: each carries at least
 * one validation rule, and an optional one has no initializer to find it by.
 */
export function variablesOf(group: VariableGroup): string[] {
  const rules = getMetadataStorage().getTargetValidationMetadatas(group, '', true, false);
  return [...new Set(rules.map((rule) => rule.propertyName))];
}
