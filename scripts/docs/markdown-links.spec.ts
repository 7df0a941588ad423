import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

/** README.md, every page under docs/ and every note under bench/results/. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return walk(path);
      return name.endsWith('.md') ? [path] : [];
    });
  return [
    join(ROOT, 'README.md'),
    ...walk(join(ROOT, 'docs')),
    ...walk(join(ROOT, 'bench', 'results')),
  ];
}

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a file's headings, numbered as GitHub numbers repeats. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = slug(match[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every relative link target in a file: `[text](target)`, without a title. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('relative Markdown links in README.md, docs/ and bench/results/', () => {
  const files = markdownFiles();

  it('finds the pages it checks', () => {
    expect(files.map((file) => relative(ROOT, file))).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/architecture.md',
        'docs/adr/README.md',
        'bench/results/README.md',
      ]),
    );
  });

  it('point at files that exist, and at headings that exist in them', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const target of relativeLinks(readFileSync(file, 'utf8'))) {
        const [path = '', anchor] = target.split('#', 2);
        const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        const where = `${relative(ROOT, file)} → ${target}`;
        if (!existsSync(resolved)) {
          broken.push(`${where} (no such file)`);
        } else if (anchor !== undefined && anchor !== '' && resolved.endsWith('.md')) {
          if (!anchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
            broken.push(`${where} (no such heading)`);
          }
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('bench/results/README.md', () => {
  it('lists every note kept in bench/results', () => {
    const dir = join(ROOT, 'bench', 'results');
    const index = readFileSync(join(dir, 'README.md'), 'utf8');
    const listed = new Set(relativeLinks(index).map((target) => target.split('#')[0]));
    const notes = readdirSync(dir).filter((name) => name.endsWith('.md') && name !== 'README.md');
    expect(notes.filter((name) => !listed.has(name))).toEqual([]);
  });
});

describe('ADRs and docs in their form', () => {
  const files = markdownFiles().filter((file) => !file.includes(`${join('bench', 'results')}`));

  it('give no ADR a section of measurements: figures live in bench notes', () => {
    const headings = files
      .filter((file) => file.includes(join('docs', 'adr')))
      .flatMap((file) =>
        [
          ...prose(readFileSync(file, 'utf8')).matchAll(
            /^#+ .*([Mm]easurement|[Rr]e-?measured).*$/gm,
          ),
        ].map((match) => `${relative(ROOT, file)}: ${match[0]}`),
      );
    expect(headings).toEqual([]);
  });

  it('name no findings headings and no tracker issue numbers', () => {
    const found = files.flatMap((file) => {
      const text = prose(readFileSync(file, 'utf8'));
      return [...text.matchAll(/^#+ .*Findings.*$|\bissues?\s*\(?#?\d+/gim)].map(
        (match) => `${relative(ROOT, file)}: ${match[0]}`,
      );
    });
    expect(found).toEqual([]);
  });
});
