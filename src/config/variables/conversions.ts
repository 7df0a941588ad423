import { ValidateIf } from 'class-validator';
import { Transform } from '../plain-to-instance';

/** `auto` or a number: the string stays `auto`, anything else becomes a number (NaN fails). */
export const autoOrNumber = () =>
  Transform(({ value }: { value: unknown }) => (value === 'auto' ? 'auto' : Number(value)));

/** The rules below it apply to a number only: `auto` is resolved at start (resolve-config.ts). */
export const unlessAuto = () => ValidateIf((_env: object, value: unknown) => value !== 'auto');

/** `off` or a number: the string stays `off`, anything else becomes a number (NaN fails). */
export const offOrNumber = () =>
  Transform(({ value }: { value: unknown }) => (value === 'off' ? 'off' : Number(value)));

/** The rules below it apply to a number only, not to `off`. */
export const unlessOff = () => ValidateIf((_env: object, value: unknown) => value !== 'off');
