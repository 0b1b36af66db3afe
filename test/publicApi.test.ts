// The package's public entry exposes the kernels by their documented names.
import { describe, expect, it } from 'vitest';

describe('public API (src/index.ts)', () => {
  it('exports the verl kernels and building blocks under their documented names', async () => {
    const api = await import('../src/index.js');
    for (const name of [
      'grpoAdvantage',
      'grpoScalarAdvantages',
      'grpoVectorizedAdvantage',
      'rlooAdvantage',
      'gaeAdvantageReturn',
      'aggLoss',
      'aggLossDenominator',
      'policyLossVanilla',
      'policyLossVanillaGrad',
      'klPenalty',
      'kishEss',
      'classifyGroups',
      'presetAdvantages',
      'runAudit',
      'writeHtmlReport',
      'Rng',
      'LabError',
    ]) {
      expect(typeof (api as Record<string, unknown>)[name], name).toBe('function');
    }
    expect(typeof api.toolEnv.step).toBe('function');
    expect(typeof api.tokenEnv).toBe('object');
  });

  it('computes a GRPO advantage through the public entry as verl does on a tiny batch', async () => {
    const { grpoAdvantage } = await import('../src/index.js');
    // Two rows of one group, rewards 1 and 0 on the last token: mean 0.5, torch.std = sqrt(0.5).
    const r = Float32Array.of(0, 1, 0, 0);
    const m = Float32Array.of(1, 1, 1, 1);
    const { advantages } = grpoAdvantage(
      { tokenLevelRewards: r, responseMask: m, index: ['u', 'u'] },
      { rows: 2, cols: 2 },
    );
    const a = 0.5 / (Math.sqrt(0.5) + 1e-6);
    expect(Array.from(advantages)).toEqual([a, a, -a, -a].map(Math.fround));
  });
});
