/**
 * Every verl function the lab implements, keyed by the golden file's `fn` name. Each kernel family
 * contributes its own table (advantages, losses) so the families can grow independently.
 */
import { advantageAdapters } from './adapters-advantage.js';
import { lossAdapters } from './adapters-loss.js';
import type { AdapterTable } from './types.js';

export function allAdapters(): AdapterTable {
  return { ...lossAdapters, ...advantageAdapters };
}
