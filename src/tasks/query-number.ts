import { Transform } from 'class-transformer';

/**
 * Converts a query-string value to a number only when it is written as a plain
 * decimal integer. `@Type(() => Number)` would also take `0x1`, `1e3`, ` 7 `
 * or an empty string (as 0); here those stay strings and fail `@IsInt()`.
 */
export const QueryInteger = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value,
  );
