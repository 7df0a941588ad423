/**
 * The part of class-transformer the configuration used, kept with its names so
 * that a variable is declared as before: `@Type(() => Number)` and
 * `@Transform(...)` convert a variable's text before class-validator checks it,
 * and `plainToInstance` fills a new instance (its initializers are the defaults).
 * class-transformer itself has had no release since 2021 (ADR 0046).
 */
type Conversion = (value: string) => unknown;

/** Each class's conversions by property, kept off the class so that its keys stay the variables. */
const conversionsOf = new WeakMap<object, Map<string, Conversion>>();

function convertWith(conversion: Conversion): PropertyDecorator {
  return (prototype, property) => {
    const conversions = conversionsOf.get(prototype) ?? new Map<string, Conversion>();
    conversions.set(String(property), conversion);
    conversionsOf.set(prototype, conversions);
  };
}

/** The value as `Number()` reads it: text that is not a number becomes NaN, which validation refuses. */
export const Type = (target: () => NumberConstructor): PropertyDecorator =>
  convertWith((value) => target()(value));

export const Transform = (transform: (params: { value: string }) => unknown): PropertyDecorator =>
  convertWith((value) => transform({ value }));

/** A new `Class` with each property given in `plain` set, converted as its decorators say. */
export function plainToInstance<T extends object>(
  Class: new () => T,
  plain: Readonly<Record<string, string>>,
): T {
  const instance = new Class();
  const conversions = conversionsOf.get(Class.prototype as object);
  for (const [property, value] of Object.entries(plain)) {
    const conversion = conversions?.get(property);
    Object.assign(instance, { [property]: conversion === undefined ? value : conversion(value) });
  }
  return instance;
}
