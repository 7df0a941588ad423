import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';
import * as ts from 'typescript';

/** One environment variable as the reference documents it. */
export interface VariableDoc {
  readonly name: string;
  /** As it would be written in the environment; `undefined`: optional, unset by default. */
  readonly defaultValue: string | undefined;
  /** The values validation lets through, e.g. "integer 1–256". */
  readonly accepts: string;
  readonly description: string;
}

type Constructor = new () => object;

/**
 * Each property's doc comment, in declaration order, read from the class's
 * source. A property without one is an error: the reference must describe
 * every variable.
 */
export function readDescriptions(source: string, className: string): Map<string, string> {
  const file = ts.createSourceFile('config.ts', source, ts.ScriptTarget.ES2022, true);
  const declaration = file.statements.find(
    (node): node is ts.ClassDeclaration =>
      ts.isClassDeclaration(node) && node.name?.text === className,
  );
  if (declaration === undefined) throw new Error(`No class ${className} in the source`);
  const descriptions = new Map<string, string>();
  for (const member of declaration.members) {
    if (!ts.isPropertyDeclaration(member) || !ts.isIdentifier(member.name)) continue;
    const name = member.name.text;
    const text = ts
      .getJSDocCommentsAndTags(member)
      .filter(ts.isJSDoc)
      .map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '')
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (text === '') {
      throw new Error(
        `${className}.${name} has no doc comment: describe the variable in a /** … */ comment above it`,
      );
    }
    descriptions.set(name, text);
  }
  return descriptions;
}

// class-validator's ValidationTypes.CUSTOM_VALIDATION: the decorators built on ValidateBy (Min, IsInt, …).
const CUSTOM_VALIDATION = 'customValidation';

const listed = (values: readonly unknown[]) =>
  values.map((value) => `\`${String(value)}\``).join(', ');

/**
 * What class-validator lets through for one property, in words. A rule not
 * worded here yet is named as its decorator, so a new variable never stops
 * the generator; word it here when one appears.
 */
function describeAccepted(target: Constructor, property: string, defaultValue: unknown): string {
  const rules = new Map<string, unknown[]>();
  for (const meta of getMetadataStorage().getTargetValidationMetadatas(target, '', true, false)) {
    if (meta.propertyName === property && meta.type === CUSTOM_VALIDATION && meta.name) {
      rules.set(meta.name, meta.constraints ?? []);
    }
  }
  const min = rules.get('min')?.[0] as number | undefined;
  const max = rules.get('max')?.[0] as number | undefined;
  const range =
    min !== undefined && max !== undefined
      ? ` ${min}–${max}`
      : min !== undefined
        ? ` ≥ ${min}`
        : max !== undefined
          ? ` ≤ ${max}`
          : '';
  const kind = rules.has('isInt') ? 'integer' : rules.has('isNumber') ? 'number' : undefined;
  const parts = kind !== undefined || range !== '' ? [`${kind ?? 'number'}${range}`] : [];
  for (const [name, constraints] of rules) {
    switch (name) {
      case 'isInt':
      case 'isNumber':
      case 'min':
      case 'max':
      case 'isString':
        break;
      case 'isIn':
        parts.push(`one of ${listed(constraints[0] as readonly unknown[])}`);
        break;
      case 'isEnum':
        parts.push(`one of ${listed(Object.values(constraints[0] as object))}`);
        break;
      case 'matches':
        parts.push(`matching \`${(constraints[0] as RegExp).source}\``);
        break;
      case 'isBoolean':
        parts.push('`true` or `false`');
        break;
      case 'isUrl':
        parts.push('a URL');
        break;
      default:
        parts.push(`\`@${name.charAt(0).toUpperCase()}${name.slice(1)}\``);
    }
  }
  if (parts.length === 0) parts.push('text');
  // Variables that resolve `auto` at start skip their number rules for it.
  return defaultValue === 'auto' ? `\`auto\` or ${parts.join(', ')}` : parts.join(', ');
}

const asText = (value: unknown): string | undefined =>
  value === undefined
    ? undefined
    : typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? `${value}`
      : JSON.stringify(value);

/** Every variable of the class, in declaration order, with its default and accepted values. */
export function describeVariables(target: Constructor, source: string): VariableDoc[] {
  const defaults = new target() as Record<string, unknown>;
  return [...readDescriptions(source, target.name)].map(([name, description]) => ({
    name,
    defaultValue: asText(defaults[name]),
    accepts: describeAccepted(target, name, defaults[name]),
    description,
  }));
}

/** A table cell: pipes would end the cell, even inside code. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** docs/configuration.md: generated, so it is kept out of Prettier and never edited by hand. */
export function renderConfigurationReference(variables: readonly VariableDoc[]): string {
  const rows = variables.map((v) =>
    [
      `\`${v.name}\``,
      v.defaultValue === undefined ? 'unset' : `\`${v.defaultValue}\``,
      v.accepts,
      v.description,
    ]
      .map(cell)
      .join(' | '),
  );
  return [
    '<!-- Generated by `npm run docs:config` from src/config/variables/; edit the doc comments there, not this file. -->',
    '',
    '# Configuration',
    '',
    'corepool is configured by environment variables only. They are read once, at start, and',
    'validated as a whole: a bad value stops the process (exit code `1`) with every offending',
    'variable listed. Empty values count as unset, as in a Kubernetes manifest that declares a',
    'variable without a value. Only `src/config/` reads `process.env`; the rest of the code gets',
    'a typed, frozen `AppConfig` in which every `auto` is already resolved.',
    '',
    '| variable | default | accepts | meaning |',
    '| --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
    '',
  ].join('\n');
}
