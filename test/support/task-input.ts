import { AppError } from '../../src/common/app-error';
import { validateInput } from '@corepool/core/host';
import type { InputSchema } from '@corepool/core';

/**
 * The messages per field that the service's own validation (`validateInput`,
 * as used for every task request) gives this input; empty when it is valid.
 */
export function fieldErrors(
  schema: InputSchema,
  plain: unknown,
  where: 'body' | 'query' = 'body',
): Record<string, string[]> {
  try {
    validateInput(schema, plain, where);
    return {};
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return Object.fromEntries(
      (error.facts.errors ?? []).map((field) => [field.property, [...field.messages]]),
    );
  }
}

/** The fields the service's validation rejects in this input. */
export function invalidProperties(
  schema: InputSchema,
  plain: unknown,
  where: 'body' | 'query' = 'body',
): string[] {
  return Object.keys(fieldErrors(schema, plain, where));
}
