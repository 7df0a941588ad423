import { validateSync, type ValidationError } from 'class-validator';
import type { AppConfig } from './app-config';
import { crossChecks } from './cross-checks';
import { EnvironmentVariables } from './environment-variables';
import { currentMachine, type MachineFacts } from './machine-facts';
import { mallocEnv } from './malloc-env';
import { plainToInstance } from './plain-to-instance';
import { RENAMED_VARIABLES, readRenamed, type RenamedVariable } from './renamed-variables';
import { resolveConfig } from './resolve-config';

export type { MachineFacts } from './machine-facts';

/** Every variable corepool reads; nothing else in the environment is looked at. */
const VARIABLE_NAMES = [
  ...Object.keys(new EnvironmentVariables()),
  'ADMIN_PORT',
  'REDIS_URL',
  'RESULT_ENCRYPTION_KEY',
  'TASK_MODULES',
  'NODE_ENV',
  'AUTH_API_KEYS_FILE',
  'AUTH_JWT_JWKS_URL',
  'AUTH_JWT_PUBLIC_KEY_FILE',
  'AUTH_JWT_ISSUER',
  'AUTH_JWT_AUDIENCE',
  // OpenTelemetry's optional variables (no default, so not among the keys above).
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION',
  'OTEL_EXPORTER_OTLP_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_CLIENT_KEY',
  'OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY',
  'OTEL_SDK_DISABLED',
  'OTEL_SERVICE_NAME',
  'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_LINK_ATTRIBUTE_COUNT_LIMIT',
  ...RENAMED_VARIABLES.map((renamed) => renamed.old),
];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(readonly problems: readonly string[]) {
    super(`Invalid environment:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Parses and validates the environment once. Every offending variable is
 * listed in the thrown ConfigError. Empty strings count as unset, as in a
 * Kubernetes manifest that declares a variable without a value.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  machine: MachineFacts = currentMachine(),
): AppConfig {
  const { values, used, conflicts } = readRenamed(ourVariables(env));
  const vars = validated(values, used, conflicts);
  const config = resolveConfig(vars, machine, {
    // NODE_OPTIONS is Node's, not ours: only read to leave an operator's own semi-space alone.
    nodeOptionsSetSemiSpace: /--max-semi-space-size\b/.test(env.NODE_OPTIONS ?? ''),
    // glibc's, not ours: read only to leave an operator's own malloc settings alone.
    mallocEnv: mallocEnv(env),
  });
  return deepFreeze({ ...config, renamedVariables: used });
}

/** Our variables that are set, trimmed; an empty value is unset. */
function ourVariables(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const raw: Record<string, string> = {};
  for (const key of VARIABLE_NAMES) {
    const value = env[key]?.trim();
    if (value !== undefined && value !== '') raw[key] = value;
  }
  return raw;
}

/** Each variable on its own, then the rules between them; throws with every problem found. */
function validated(
  raw: Record<string, string>,
  renamed: readonly RenamedVariable[],
  conflicts: readonly string[],
): EnvironmentVariables {
  const vars = plainToInstance(EnvironmentVariables, raw);
  const errors = validateSync(vars, { forbidUnknownValues: true, stopAtFirstError: true });
  const problems = [...conflicts, ...errors.flatMap((error) => describe(error, raw, renamed))];
  if (problems.length > 0) throw new ConfigError(problems);
  const conflicting = crossChecks(vars);
  if (conflicting.length > 0) throw new ConfigError(conflicting);
  return vars;
}

/**
 * The message with the value as it was written, not as it was converted (`'x'`, not NaN),
 * and the old name it was written under, if any.
 */
function describe(
  error: ValidationError,
  raw: Record<string, string>,
  renamed: readonly RenamedVariable[],
): string[] {
  const value = JSON.stringify(raw[error.property] ?? error.value);
  const old = renamed.find((entry) => entry.current === error.property)?.old;
  const setAs = old === undefined ? '' : `, set as ${old}`;
  return Object.values(error.constraints ?? {}).map(
    (message) => `${message} (got ${value}${setAs})`,
  );
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
