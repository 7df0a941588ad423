/**
 * The one declaration of a task's input: a plain JSON Schema object, built with
 * the small builders below. The catalog and the OpenAPI document publish it as
 * is; the main thread compiles it once (`common/validation.ts`, with Ajv)
 * into a check that is linear in the input's size.
 *
 * Pure data and a few functions, no dependencies: worker threads load the task
 * files, and a thread should not load a validation library to run a task.
 *
 * What JSON Schema cannot say (a matrix is rectangular, one field excludes
 * another) rides along under the `INPUT_RULES` symbol: JSON serialisation and
 * Ajv ignore symbol keys, so the published schema stays plain JSON Schema.
 */

/** Where a property's non-JSON-Schema rules are kept (see above). */
export const INPUT_RULES: unique symbol = Symbol('corepool.inputRules');

/** The subset of JSON Schema corepool's inputs use; all of it is checked by Ajv. */
export interface JsonSchema {
  readonly type?: 'integer' | 'number' | 'string' | 'boolean' | 'object' | 'array';
  readonly title?: string;
  readonly description?: string;
  readonly default?: unknown;
  readonly enum?: readonly (string | number)[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly items?: JsonSchema;
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  readonly [INPUT_RULES]?: PropertyRules;
}

/** The schema of a task's whole input: an object of named properties, nothing else allowed. */
export interface InputSchema<Input = object> extends JsonSchema {
  readonly type: 'object';
  readonly title: string;
  readonly properties: Readonly<Record<string, JsonSchema>>;
  readonly required: readonly string[];
  readonly additionalProperties: false;
  /** Type only: ties the schema to the input type the task's `run` receives. */
  readonly __input?: Input;
}

/** A check JSON Schema cannot express; returns the problem (`$property …`), or undefined. */
export type InputRule = (
  value: unknown,
  input: Readonly<Record<string, unknown>>,
) => string | undefined;

/** The non-JSON-Schema part of a property's declaration. */
export interface PropertyRules {
  /** `null` counts as absent (class-validator's `@IsOptional`). */
  readonly optional?: boolean;
  /** The property is checked only when this holds for the whole input. */
  readonly when?: (input: Readonly<Record<string, unknown>>) => boolean;
  /** The message when the property is required and absent. */
  readonly requiredMessage?: string;
  /**
   * Replaces the JSON Schema check: the schema then only describes the value,
   * and this check (with messages that name the offending spot) decides.
   */
  readonly check?: InputRule;
  /** Checks run in order once the schema (or `check`) accepts the value; the first problem counts. */
  readonly rules?: readonly InputRule[];
}

/** What every property builder takes besides its own bounds. */
export interface PropertyOptions<T> extends PropertyRules {
  readonly description?: string;
  /** Used when the property is absent; published as the schema's `default`. */
  readonly default?: T;
}

function property<T>(schema: JsonSchema, options: PropertyOptions<T> = {}): JsonSchema {
  const { description, default: defaultValue, ...rules } = options;
  return {
    ...schema,
    ...(description === undefined ? {} : { description }),
    ...(defaultValue === undefined ? {} : { default: defaultValue }),
    [INPUT_RULES]: rules,
  };
}

export const integer = (
  bounds: { minimum?: number; maximum?: number },
  options?: PropertyOptions<number>,
): JsonSchema => property({ type: 'integer', ...bounds }, options);

export const string = (
  bounds: { minLength?: number; maxLength?: number },
  options?: PropertyOptions<string>,
): JsonSchema => property({ type: 'string', ...bounds }, options);

/** One of a fixed list of strings. */
export const oneOf = <T extends string>(
  values: readonly T[],
  options?: PropertyOptions<T>,
): JsonSchema => property({ type: 'string', enum: values }, options);

export const boolean = (options?: PropertyOptions<boolean>): JsonSchema =>
  property({ type: 'boolean' }, options);

/** Any JSON object; its content is someone else's to check (a job's task input). */
export const jsonObject = (options?: PropertyOptions<object>): JsonSchema =>
  property({ type: 'object' }, options);

/**
 * A value whose shape `schema` describes but `check` decides, for checks whose
 * messages should say where the problem is (`a [3][1] must be a finite number`).
 */
export const checkedBy = <T>(
  schema: JsonSchema,
  check: InputRule,
  options?: PropertyOptions<T>,
): JsonSchema => property(schema, { ...options, check });

/**
 * A task's input schema from its properties. A property with no default that
 * is neither optional nor conditional (`when`) is required.
 */
export function inputSchema<Input>(
  title: string,
  properties: Readonly<Record<string, JsonSchema>>,
): InputSchema<Input> {
  const required = Object.entries(properties)
    .filter(([, schema]) => {
      const rules = schema[INPUT_RULES];
      return schema.default === undefined && rules?.optional !== true && rules?.when === undefined;
    })
    .map(([name]) => name);
  const schema: InputSchema<Input> = {
    type: 'object',
    title,
    properties: Object.freeze({ ...properties }),
    required,
    additionalProperties: false,
  };
  return Object.freeze(schema);
}

/** The input's defaults, as a fresh object (what a task gets for an empty input). */
export function defaultsOf<Input>(schema: InputSchema<Input>): Input {
  const defaults: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    if (property.default !== undefined) defaults[name] = property.default;
  }
  return defaults as Input;
}
