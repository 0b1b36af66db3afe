/**
 * The JSON value type of records and their parts. Declared in the core so that every layer (a
 * learner's description of its policy, an experiment's record) can name it without importing a later
 * layer; `src/experiments/types.ts` re-exports it.
 */

/** Scalar or small JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
