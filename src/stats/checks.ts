/** Input checks shared by the statistics: one place that turns bad values into LabErrors naming the field and position. */
import { LabError } from '../core/errors.js';

/** Throws BAD_ARGUMENT for fewer than `min` values and NON_FINITE naming the first non-finite value's position. */
export function checkFiniteValues(values: ArrayLike<number>, field: string, min = 1): void {
  if (values.length < min) {
    throw new LabError('BAD_ARGUMENT', `${field}: expected at least ${min} value(s), got ${values.length}`, {
      details: { field },
    });
  }
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isFinite(v)) {
      throw new LabError('NON_FINITE', `${field}: value ${v} at position ${i} is not finite`, {
        details: { field, row: i },
      });
    }
  }
}

/** Throws BAD_ARGUMENT unless `value` is an integer in [min, max], naming the option. */
export function checkInteger(value: number, field: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LabError('BAD_ARGUMENT', `${field}: expected an integer in [${min}, ${max}], got ${value}`, {
      details: { field, value },
    });
  }
}

/** Throws BAD_ARGUMENT unless 0 < level < 1. */
export function checkLevel(level: number, field = 'level'): void {
  if (!(level > 0 && level < 1)) {
    throw new LabError('BAD_ARGUMENT', `${field}: expected a confidence level in (0, 1), got ${level}`, {
      details: { field, value: level },
    });
  }
}
