/** A variable's old name, still read, and the name that replaced it. */
export interface RenamedVariable {
  readonly old: string;
  readonly current: string;
}

/**
 * Names that said "worker" for a cluster process: a worker is a thread, a
 * process is a process (docs/adr/0049-threads-are-workers-processes-are-processes.md).
 * The old name keeps working, with a warning at start.
 */
export const RENAMED_VARIABLES: readonly RenamedVariable[] = [
  { old: 'CLUSTER_WORKERS', current: 'CLUSTER_PROCESSES' },
];

export interface RenamesRead {
  /** The environment under the current names only. */
  readonly values: Record<string, string>;
  /** The old names that were set: each is warned about once, at start. */
  readonly used: readonly RenamedVariable[];
  /** Old and new name both set, to different values. */
  readonly conflicts: readonly string[];
}

/**
 * Moves each old name's value to its current name. Both set to the same
 * value is accepted (a manifest in transition); to different values, neither
 * is guessed at.
 */
export function readRenamed(raw: Readonly<Record<string, string>>): RenamesRead {
  const values = { ...raw };
  const used: RenamedVariable[] = [];
  const conflicts: string[] = [];
  for (const renamed of RENAMED_VARIABLES) {
    const oldValue = values[renamed.old];
    if (oldValue === undefined) continue;
    delete values[renamed.old];
    used.push(renamed);
    const currentValue = values[renamed.current];
    if (currentValue === undefined) values[renamed.current] = oldValue;
    else if (currentValue !== oldValue) {
      conflicts.push(
        `${renamed.old} is the old name of ${renamed.current}: set only ${renamed.current} (got ${renamed.old}=${JSON.stringify(oldValue)} and ${renamed.current}=${JSON.stringify(currentValue)})`,
      );
    }
  }
  return { values, used, conflicts };
}

/** The start-up warning for an old name. */
export function renameWarning({ old, current }: RenamedVariable): string {
  return `${old} is deprecated: it is now ${current}, same meaning; the old name will be removed`;
}
