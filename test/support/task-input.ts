import { AppError } from '../../src/common/app-error';
import { validateInput } from '../../src/common/validation';

/**
 * The messages per field that the service's own validation (`validateInput`,
 * as used for every task request) gives this input; empty when it is valid.
 */
export async function fieldErrors(
  dto: new () => object,
  plain: unknown,
  where: 'body' | 'query' = 'body',
): Promise<Record<string, string[]>> {
  try {
    await validateInput(dto, plain, where);
    return {};
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return Object.fromEntries(
      (error.facts.errors ?? []).map((field) => [field.property, [...field.messages]]),
    );
  }
}

/** The fields the service's validation rejects in this input. */
export async function invalidProperties(
  dto: new () => object,
  plain: unknown,
  where: 'body' | 'query' = 'body',
): Promise<string[]> {
  return Object.keys(await fieldErrors(dto, plain, where));
}
