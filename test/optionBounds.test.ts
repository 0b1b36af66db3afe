// Options whose extreme values used to produce Infinity/NaN or silently meaningless numbers are refused up front.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/experiments/options.js';
import { loadExperiment } from '../src/experiments/registry.js';

describe('option bounds', () => {
  it.each([
    ['rollout', 'lr=1e308', 'lr'],
    ['advantage', 'epsilon=1e300', 'epsilon'],
  ])('%s refuses %s naming the key', async (name, pair, key) => {
    const exp = await loadExperiment(name);
    expect(() => resolveConfig(exp, [pair])).toThrow(new RegExp(`option ${key}=`));
    expect(() => resolveConfig(exp, [pair.replace(/=.*/, '=0.5')])).not.toThrow();
  });
});
