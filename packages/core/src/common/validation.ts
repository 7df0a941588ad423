import { Ajv, type AnySchemaObject, type ErrorObject } from 'ajv';
import {
  INPUT_RULES,
  type InputRule,
  type InputSchema,
  type JsonSchema,
  type PropertyRules,
} from '../tasks/input-schema';
import { Errors, type FieldError } from './app-error';

/**
 * At most this many fields are listed in a 400's `errors`; `errorCount` says how many failed.
 * A body of 80,000 unknown keys used to be answered with all of them (6 MB).
 */
export const MAX_REPORTED_ERRORS = 10;

/** Longer property names are cut in errors: a hostile 1 MiB key must not come back thrice. */
const MAX_NAME_IN_ERRORS = 100;

/**
 * One Ajv for every input. `allErrors: false`: each property's check stops at its first
 * problem, so a matrix of 50,000 bad entries costs one message, not 50,000.
 * `strictNumbers`: `1e400` parses to Infinity, which is not a number here.
 */
const ajv = new Ajv({
  allErrors: false,
  strict: true,
  strictNumbers: true,
  coerceTypes: false,
  useDefaults: false,
});

/** Query values arrive as strings; an integer property takes its plain decimal form only. */
const QUERY_INTEGER = /^-?\d{1,15}$/;

interface CompiledProperty {
  readonly name: string;
  readonly default: unknown;
  readonly optional: boolean;
  readonly integer: boolean;
  readonly when: PropertyRules['when'];
  readonly requiredMessage: string | undefined;
  /** The first problem with a present value, `$property` not yet replaced; undefined if none. */
  readonly problem: InputRule;
}

interface CompiledInput {
  readonly properties: readonly CompiledProperty[];
  readonly known: ReadonlySet<string>;
}

const compiledInputs = new WeakMap<object, CompiledInput>();

/**
 * Compiles an input schema into its check, once (Ajv generates code per property schema).
 * The task catalog calls this at startup for every task, so a bad schema fails the start,
 * not a request.
 */
export function compileInput(schema: InputSchema<unknown>): CompiledInput {
  const cached = compiledInputs.get(schema);
  if (cached !== undefined) return cached;
  const required = new Set(schema.required ?? []);
  const properties = Object.entries(schema.properties ?? {}).map(([name, property]) =>
    compileProperty(name, property, required.has(name)),
  );
  const compiled = { properties, known: new Set(properties.map((property) => property.name)) };
  compiledInputs.set(schema, compiled);
  return compiled;
}

function compileProperty(name: string, schema: JsonSchema, required: boolean): CompiledProperty {
  const rules = schema[INPUT_RULES] ?? {};
  const first = rules.check ?? schemaCheck(schema);
  const refinements = rules.rules ?? [];
  return {
    name,
    default: schema.default,
    // A plain JSON Schema (a TASK_MODULES task) says optional by leaving a property out of `required`.
    optional:
      rules.optional === true ||
      (!required && rules.when === undefined && !(INPUT_RULES in schema)),
    integer: schema.type === 'integer',
    when: rules.when,
    requiredMessage: rules.requiredMessage,
    problem: (value, input) => {
      const problem = first(value, input);
      if (problem !== undefined) return problem;
      for (const rule of refinements) {
        const refined = rule(value, input);
        if (refined !== undefined) return refined;
      }
      return undefined;
    },
  };
}

/** Ajv's check of one property's schema, with class-validator's wording of the first problem. */
function schemaCheck(schema: JsonSchema): InputRule {
  // Ajv reads string keys only: the rules under INPUT_RULES are not part of what it compiles.
  const validate = ajv.compile(schema as AnySchemaObject);
  return (value) => {
    if (validate(value)) return undefined;
    const [error] = validate.errors ?? [];
    return error === undefined ? '$property is invalid' : messageOf(error);
  };
}

const TYPE_MESSAGES: Readonly<Record<string, string>> = {
  integer: 'must be an integer number',
  number: 'must be a number conforming to the specified constraints',
  string: 'must be a string',
  boolean: 'must be a boolean value',
  object: 'must be an object',
  array: 'must be an array',
};

/** The wording class-validator used, which clients and tests already know. */
function messageOf(error: ErrorObject): string {
  const at = `$property${error.instancePath.replaceAll('/', '.')}`;
  const params = error.params as { type?: string; limit?: number; allowedValues?: unknown[] };
  switch (error.keyword) {
    case 'type':
      return `${at} ${TYPE_MESSAGES[params.type ?? ''] ?? `must be ${params.type}`}`;
    case 'minimum':
      return `${at} must not be less than ${params.limit}`;
    case 'maximum':
      return `${at} must not be greater than ${params.limit}`;
    case 'enum':
      return `${at} must be one of the following values: ${(params.allowedValues ?? []).join(', ')}`;
    case 'minLength':
      return `${at} must be longer than or equal to ${params.limit} characters`;
    case 'maxLength':
      return `${at} must be shorter than or equal to ${params.limit} characters`;
    case 'minItems':
      return `${at} must contain at least ${params.limit} elements`;
    case 'maxItems':
      return `${at} must contain no more than ${params.limit} elements`;
    default:
      return `${at} ${error.message ?? 'is invalid'}`;
  }
}

/** Collects field errors, keeping the first few and counting them all. */
class FieldErrorList {
  readonly reported: FieldError[] = [];
  count = 0;

  add(property: string, message: string): void {
    this.count += 1;
    if (this.reported.length < MAX_REPORTED_ERRORS) {
      const name = shortName(property);
      this.reported.push({ property: name, messages: [message.replaceAll('$property', name)] });
    }
  }

  throwIfAny(): void {
    if (this.count === 0) return;
    const names = this.reported.map((field) => field.property).join(', ');
    const more =
      this.count > this.reported.length ? ` and ${this.count - this.reported.length} more` : '';
    throw Errors.validationFailed(`Invalid ${names}${more}`, this.reported, this.count);
  }
}

function shortName(property: string): string {
  return property.length > MAX_NAME_IN_ERRORS
    ? `${property.slice(0, MAX_NAME_IN_ERRORS)}…`
    : property;
}

/**
 * Turns untrusted JSON (or a parsed query string) into a task's input, defaults applied.
 * Linear in the input's size: each declared property is checked once (Ajv, stopping at its
 * first problem), each other key costs one set lookup, and the values of unknown keys are
 * never visited. At most `MAX_REPORTED_ERRORS` fields are reported, with their count.
 */
export function validateInput<Input>(
  schema: InputSchema<Input>,
  plain: unknown,
  where: 'body' | 'query' = 'body',
): Input {
  // No body at all means "all defaults"; a JSON `null` is a body, and not an object.
  const value = plain === undefined ? {} : plain;
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    Buffer.isBuffer(value)
  ) {
    throw Errors.validationFailed(`The ${where} must be a JSON object`, [
      { property: where, messages: [`${where} must be an object`] },
    ]);
  }
  const given = value as Readonly<Record<string, unknown>>;
  const { properties, known } = compileInput(schema);

  // The input as the task will get it: given values (query integers converted), then defaults.
  // Rules that look at other fields see these converted values.
  const input: Record<string, unknown> = {};
  for (const property of properties) {
    let field = Object.hasOwn(given, property.name) ? given[property.name] : undefined;
    if (where === 'query' && property.integer && typeof field === 'string') {
      field = QUERY_INTEGER.test(field) ? Number(field) : field;
    }
    const absent = field === undefined || (field === null && property.optional);
    if (!absent) input[property.name] = field;
    else if (property.default !== undefined) input[property.name] = property.default;
  }

  const errors = new FieldErrorList();
  for (const property of properties) {
    if (property.when !== undefined && !property.when(input)) continue;
    const field = input[property.name];
    if (field === undefined) {
      if (property.optional) continue;
      errors.add(property.name, property.requiredMessage ?? property.problem(field, input) ?? '');
      continue;
    }
    const problem = property.problem(field, input);
    if (problem !== undefined) errors.add(property.name, problem);
  }
  // Whitelisting: one set lookup per key, however many keys there are.
  for (const key of Object.keys(given)) {
    if (!known.has(key)) errors.add(key, 'property $property should not exist');
  }
  errors.throwIfAny();
  return input as Input;
}
