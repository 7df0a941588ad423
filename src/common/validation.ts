import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError, type ValidatorOptions } from 'class-validator';
import { Errors, type FieldError } from './app-error';

/** The one set of validation rules: unknown fields are errors, not silently dropped. */
export const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
};

/** Deeper than any task input needs (a matrix is three levels), far below the stack's limit. */
const MAX_INPUT_DEPTH = 32;

/** class-validator's tree of errors as a flat list with dotted paths (`a.0.b`). */
export function toFieldErrors(errors: readonly ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const property = parent === '' ? error.property : `${parent}.${error.property}`;
    const own = Object.values(error.constraints ?? {});
    const here = own.length > 0 ? [{ property, messages: own }] : [];
    return [...here, ...toFieldErrors(error.children ?? [], property)];
  });
}

export function validationError(errors: readonly ValidationError[]) {
  const fields = toFieldErrors(errors);
  const names = fields.map((field) => field.property).join(', ');
  return Errors.validationFailed(`Invalid ${names === '' ? 'input' : names}`, fields);
}

/**
 * Turns untrusted JSON into a validated DTO instance, applying its defaults.
 * Anything but a JSON object is rejected before class-transformer sees it
 * (an array would otherwise become an array of DTOs).
 */
export async function validateInput<T extends object>(
  dto: new () => T,
  plain: unknown,
  where: 'body' | 'query' = 'body',
): Promise<T> {
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
  // class-transformer and class-validator recurse into every value, unknown keys included:
  // deep enough nesting would overflow the stack (a 500) before any rule could refuse it.
  if (nestedDeeperThan(value, MAX_INPUT_DEPTH)) {
    throw Errors.validationFailed(`The ${where} nests deeper than ${MAX_INPUT_DEPTH} levels`, [
      {
        property: where,
        messages: [`${where} must not nest deeper than ${MAX_INPUT_DEPTH} levels`],
      },
    ]);
  }
  const instance = plainToInstance(dto, value);
  // class-transformer silently skips some keys (`__proto__`, `constructor`, and any whose name
  // is a method of the instance, like `toString`), so whitelisting never sees them: they are
  // unknown fields all the same.
  const skipped = Object.keys(value).filter((key) => !Object.hasOwn(instance, key));
  if (skipped.length > 0) {
    throw Errors.validationFailed(
      `Invalid ${skipped.join(', ')}`,
      skipped.map((property) => ({
        property,
        messages: [`property ${property} should not exist`],
      })),
    );
  }
  // Non-objects were refused above, so a DTO without any rule (a task that takes
  // no options) is fine here: it accepts `{}` and, whitelisting, nothing else.
  const errors = await validate(instance, { ...VALIDATOR_OPTIONS, forbidUnknownValues: false });
  if (errors.length > 0) throw validationError(errors);
  return instance;
}

/** True when objects and arrays nest more than `limit` levels; iterative, so it cannot overflow. */
function nestedDeeperThan(root: object, limit: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 1 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, depth } = next;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(value)) {
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}
