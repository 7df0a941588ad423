import { Errors } from '../common/app-error';

/** Where a page of `GET /api/jobs` ended: the last job's creation time and id (ties broken by id). */
export interface JobPosition {
  readonly createdAt: number;
  readonly id: string;
}

/** Opaque to clients: base64url of `createdAt:id`. */
export function encodeCursor({ createdAt, id }: JobPosition): string {
  return Buffer.from(`${createdAt}:${id}`, 'utf8').toString('base64url');
}

/** The position a cursor names; a cursor that was not made by `encodeCursor` is VALIDATION_FAILED. */
export function decodeCursor(cursor: string): JobPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{1,16}):([\w-]{1,100})$/.exec(text);
  if (match === null) {
    throw Errors.validationFailed('cursor is not one this service made', [
      { property: 'query.cursor', messages: ['use links.next of the previous page as it is'] },
    ]);
  }
  return { createdAt: Number(match[1]), id: match[2] as string };
}
