import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError, type ValidatorOptions } from 'class-validator';
import { Errors, type FieldError } from './app-error';

/** The one set of validation rules: unknown fields are errors, not silently dropped. */
export const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
};

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
  const value = plain ?? {};
  if (typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value)) {
    throw Errors.validationFailed(`The ${where} must be a JSON object`, [
      { property: where, messages: [`${where} must be an object`] },
    ]);
  }
  const instance = plainToInstance(dto, value);
  // Non-objects were refused above, so a DTO without any rule (a task that takes
  // no options) is fine here: it accepts `{}` and, whitelisting, nothing else.
  const errors = await validate(instance, { ...VALIDATOR_OPTIONS, forbidUnknownValues: false });
  if (errors.length > 0) throw validationError(errors);
  return instance;
}
