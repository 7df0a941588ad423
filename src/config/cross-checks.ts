import type { EnvironmentVariables } from './environment-variables';

/** Rules between variables, checked once each variable is valid on its own. */
export function crossChecks(vars: EnvironmentVariables): string[] {
  const problems: string[] = [];
  // Node refuses a headers timeout longer than the request timeout that contains it.
  if (vars.HTTP_HEADERS_TIMEOUT_MS > vars.HTTP_REQUEST_TIMEOUT_MS) {
    problems.push(
      `HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS (got ${vars.HTTP_HEADERS_TIMEOUT_MS} > ${vars.HTTP_REQUEST_TIMEOUT_MS})`,
    );
  }
  if (vars.ADMIN_PORT !== undefined && vars.ADMIN_PORT === vars.PORT) {
    problems.push(`ADMIN_PORT must differ from PORT (got ${vars.ADMIN_PORT})`);
  }
  // A body within its route's limit must be able to fit, or it could only ever get 503.
  const budget = vars.BODY_MEMORY_BUDGET_BYTES;
  if (budget !== 'auto' && budget < vars.BINARY_BODY_LIMIT_BYTES) {
    problems.push(
      `BODY_MEMORY_BUDGET_BYTES must be at least BINARY_BODY_LIMIT_BYTES (got ${budget} < ${vars.BINARY_BODY_LIMIT_BYTES})`,
    );
  }
  // A socket is silent while its task runs: a shorter idle timeout would cut valid requests.
  const connection = vars.HTTP_CONNECTION_TIMEOUT_MS;
  if (connection !== 'auto' && connection > 0 && connection <= vars.TASK_TIMEOUT_MS) {
    problems.push(
      `HTTP_CONNECTION_TIMEOUT_MS must be 0 or longer than TASK_TIMEOUT_MS (got ${connection} <= ${vars.TASK_TIMEOUT_MS})`,
    );
  }
  // OpenTelemetry's SDK would lower it silently; a batch larger than the queue cannot fill.
  if (vars.OTEL_BSP_MAX_EXPORT_BATCH_SIZE > vars.OTEL_BSP_MAX_QUEUE_SIZE) {
    problems.push(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not exceed OTEL_BSP_MAX_QUEUE_SIZE (got ${vars.OTEL_BSP_MAX_EXPORT_BATCH_SIZE} > ${vars.OTEL_BSP_MAX_QUEUE_SIZE})`,
    );
  }
  problems.push(...authChecks(vars));
  return problems;
}

/** Each mode's own settings must be there: a service meant to check callers must not start open. */
function authChecks(vars: EnvironmentVariables): string[] {
  if (vars.AUTH_MODE === 'api-key' && vars.AUTH_API_KEYS_FILE === undefined) {
    return ['AUTH_MODE=api-key needs AUTH_API_KEYS_FILE'];
  }
  if (vars.AUTH_MODE !== 'jwt') return [];
  const problems: string[] = [];
  const keySources = [vars.AUTH_JWT_JWKS_URL, vars.AUTH_JWT_PUBLIC_KEY_FILE].filter(
    (source) => source !== undefined,
  );
  if (keySources.length !== 1) {
    problems.push('AUTH_MODE=jwt needs one of AUTH_JWT_JWKS_URL and AUTH_JWT_PUBLIC_KEY_FILE');
  }
  if (vars.AUTH_JWT_ISSUER === undefined) problems.push('AUTH_MODE=jwt needs AUTH_JWT_ISSUER');
  if (vars.AUTH_JWT_AUDIENCE === undefined) problems.push('AUTH_MODE=jwt needs AUTH_JWT_AUDIENCE');
  return problems;
}
