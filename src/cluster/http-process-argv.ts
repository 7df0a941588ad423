const SEMI_SPACE_FLAG = '--max-semi-space-size';

/**
 * The node options of a forked HTTP process: the primary's own, plus V8's
 * largest semi-space (`CLUSTER_MAX_SEMI_SPACE_MB`, ADR 0024) unless it is 0
 * or the primary's command line already sets one (an operator's choice wins).
 * A smaller young generation makes every scavenge, a pause of the whole
 * event loop, shorter, and more frequent (the pauses measured: ADR 0024).
 */
export function httpProcessExecArgv(
  primaryExecArgv: readonly string[],
  maxSemiSpaceMb: number,
): string[] {
  const own = primaryExecArgv.some(
    (arg) => arg === SEMI_SPACE_FLAG || arg.startsWith(`${SEMI_SPACE_FLAG}=`),
  );
  if (maxSemiSpaceMb === 0 || own) return [...primaryExecArgv];
  return [...primaryExecArgv, `${SEMI_SPACE_FLAG}=${maxSemiSpaceMb}`];
}
