import { AppError } from '../../src/common/app-error';

/** The AppError code a promise rejects with; anything else (or no rejection) fails the test. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  throw new Error('expected a coded error');
}
