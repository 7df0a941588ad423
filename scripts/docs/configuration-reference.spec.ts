import { readFileSync } from 'node:fs';
import { IsIn, IsInt, IsOptional, IsPositive, Matches, Max, Min } from 'class-validator';
import {
  describeVariables,
  readDescriptions,
  renderConfigurationReference,
} from './configuration-reference';
import {
  CONFIGURATION_REFERENCE,
  currentConfigurationReference,
} from './generate-configuration-reference';

class FixtureVariables {
  /** A port. */
  @Min(0)
  @Max(65535)
  @IsInt()
  PORT = 3000;

  /** Threads; `auto` picks them. */
  @Min(1)
  @IsInt()
  THREADS: number | 'auto' = 'auto';

  /** How much to say. */
  @IsIn(['quiet', 'loud'])
  LEVEL = 'quiet';

  /** A key like a|b. */
  @IsOptional()
  @Matches(/^(a|b)$/)
  KEY?: string;

  /** A rule the generator does not word. */
  @IsPositive()
  RATIO = 1;
}

const FIXTURE_SOURCE = `
class FixtureVariables {
  /** A port. */
  PORT = 3000;

  /**
   * Threads;
   * \`auto\` picks them.
   */
  THREADS = 'auto';

  /** How much to say. */
  LEVEL = 'quiet';

  /** A key like a|b. */
  KEY?: string;

  /** A rule the generator does not word. */
  RATIO = 1;
}`;

describe('configuration reference', () => {
  it('is what `npm run docs:config` generates from the code (run it after changing src/config)', () => {
    expect(readFileSync(CONFIGURATION_REFERENCE, 'utf8')).toBe(currentConfigurationReference());
  });

  it('describes every variable with its default, the values it accepts and its doc comment', () => {
    expect(describeVariables(FixtureVariables, FIXTURE_SOURCE)).toEqual([
      { name: 'PORT', defaultValue: '3000', accepts: 'integer 0–65535', description: 'A port.' },
      {
        name: 'THREADS',
        defaultValue: 'auto',
        accepts: '`auto` or integer ≥ 1',
        description: 'Threads; `auto` picks them.',
      },
      {
        name: 'LEVEL',
        defaultValue: 'quiet',
        accepts: 'one of `quiet`, `loud`',
        description: 'How much to say.',
      },
      {
        name: 'KEY',
        defaultValue: undefined,
        accepts: 'matching `^(a|b)$`',
        description: 'A key like a|b.',
      },
      {
        name: 'RATIO',
        defaultValue: '1',
        accepts: '`@IsPositive`',
        description: 'A rule the generator does not word.',
      },
    ]);
  });

  it('renders one table row per variable, with pipes escaped so they stay inside their cell', () => {
    const markdown = renderConfigurationReference(
      describeVariables(FixtureVariables, FIXTURE_SOURCE),
    );
    expect(markdown).toContain('| `PORT` | `3000` | integer 0–65535 | A port. |');
    expect(markdown).toContain('| `KEY` | unset | matching `^(a\\|b)$` | A key like a\\|b. |');
  });

  it('refuses a variable without a doc comment', () => {
    const source = 'class FixtureVariables {\n  /** A port. */\n  PORT = 3000;\n\n  HOST = "x";\n}';
    expect(() => readDescriptions(source, 'FixtureVariables')).toThrow(
      'FixtureVariables.HOST has no doc comment',
    );
  });
});
