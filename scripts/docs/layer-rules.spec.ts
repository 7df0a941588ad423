import { readFileSync } from 'node:fs';
import {
  ARCHITECTURE,
  cruiserRules,
  currentArchitecture,
  layersOf,
  renderLayerTable,
  sourceFolders,
} from './layer-rules';

const layers = layersOf(cruiserRules());

describe('layer rules', () => {
  it('are what docs/architecture.md lists (run `npm run docs:layers` after changing LAYERS)', () => {
    expect(readFileSync(ARCHITECTURE, 'utf8')).toBe(currentArchitecture());
  });

  it('place every folder of src/, so a new folder cannot go unchecked', () => {
    expect(layers.map((layer) => layer.folder).sort()).toEqual(sourceFolders());
  });

  it('name only folders that exist; the one pair importing each other is the one the doc explains', () => {
    const known = new Set(sourceFolders());
    const imports = new Map(layers.map((layer) => [layer.folder, layer.imports]));
    for (const layer of layers) {
      for (const target of [...layer.imports, ...layer.notYetEnforced]) {
        expect({ from: layer.folder, target, known: known.has(target) }).toMatchObject({
          known: true,
        });
      }
    }
    const mutual = layers.flatMap((layer) =>
      layer.imports
        .filter((target) => imports.get(target)?.includes(layer.folder) === true)
        .map((target) => [layer.folder, target].sort().join(' ↔ ')),
    );
    // Folder-level, type imports included: one pair is known and allowed, see the doc.
    expect([...new Set(mutual)]).toEqual(['cluster ↔ lifecycle']);
  });

  it('keep tracing/ and workers/ apart: tracing reads the engine through @corepool/core/host', () => {
    const of = (folder: string) => layers.find((layer) => layer.folder === folder)!;
    expect(of('tracing').imports).not.toContain('workers');
    expect(of('workers').imports).not.toContain('tracing');
  });

  it("puts every folder in the doc's diagram", () => {
    const doc = readFileSync(ARCHITECTURE, 'utf8');
    const section = doc.slice(doc.indexOf('## Layers and arrows'));
    const diagram = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    for (const folder of sourceFolders()) {
      expect({ folder, inDiagram: diagram.includes(`${folder}/`) }).toEqual({
        folder,
        inDiagram: true,
      });
    }
  });

  it('reads the rules it renders: a folder with no imports shows a dash', () => {
    expect(renderLayerTable([{ folder: 'tasks', imports: [], notYetEnforced: ['x'] }])).toContain(
      '| `tasks/` | — | `x/` |',
    );
  });
});
