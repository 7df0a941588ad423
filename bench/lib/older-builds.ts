/**
 * The environment for another checkout's build, run side by side with this one:
 * `CLUSTER_PROCESSES` is also given under its old name, `CLUSTER_WORKERS`, which
 * builds from before the rename read instead (ADR 0049). A build that knows both
 * accepts them when they agree.
 */
export function forAnyBuild(env: Record<string, string>): Record<string, string> {
  const processes = env.CLUSTER_PROCESSES;
  return processes === undefined ? env : { CLUSTER_WORKERS: processes, ...env };
}
