import { readFileSync } from 'node:fs';

export interface Instruction {
  readonly keyword: string;
  readonly args: string;
  /** Name (or index) of the stage the instruction belongs to. */
  readonly stage: string;
}

/** Reads a Dockerfile into instructions: comments dropped, `\` continuations joined. */
export function parseDockerfile(path: string): Instruction[] {
  const logical = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const instructions: Instruction[] = [];
  let stage = 'global';
  let stages = 0;
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (keyword.toUpperCase() === 'FROM') {
      stage = / AS (\S+)$/i.exec(args)?.[1] ?? String(stages);
      stages += 1;
    }
    instructions.push({ keyword: keyword.toUpperCase(), args, stage });
  }
  return instructions;
}

/** `COPY [--from=x] [--chown=y] a b dest` → flags and sources. */
export function copySources(args: string): { from?: string; sources: string[] } {
  const words = args.split(/\s+/);
  const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((word) => !word.startsWith('--'));
  return { from, sources: paths.slice(0, -1) };
}
