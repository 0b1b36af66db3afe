import { describe, expect, it } from 'vitest';
import { expectMatchesGolden, goldenBatch, goldenCases } from '../../test/support/frameworkIsGolden.js';
import { expectLabError } from '../../test/support/labError.js';
import {
  EXTRA_CORRECTION_MODES,
  extraCorrectionLabel,
  findExtraCorrectionMode,
  resolveExtraCorrectionParams,
} from './extraCorrectionModes.js';
import { openrlhfVllmImportanceSampling } from './openrlhfVllmIs.js';
import { trlVllmImportanceSampling } from './trlVllmIs.js';

const shape = { rows: 2, cols: 3 };
const inputs = {
  oldLogProb: Float64Array.of(-0.2, -1.5, -0.1, -2, -0.4, 3),
  rolloutLogProb: Float64Array.of(-0.5, -0.2, -0.1, -2.3, -0.9, Number.NaN),
  responseMask: Float32Array.of(1, 1, 1, 1, 1, 0),
};

describe('EXTRA_CORRECTION_MODES', () => {
  it("lists TRL's four modes and OpenRLHF's three under their own names, with the commits they reproduce", () => {
    expect(EXTRA_CORRECTION_MODES.map((m) => m.id)).toEqual([
      'trl:token_truncate',
      'trl:token_mask',
      'trl:sequence_truncate',
      'trl:sequence_mask',
      'openrlhf:tis',
      'openrlhf:icepop',
      'openrlhf:seq-mask-tis',
    ]);
    expect(EXTRA_CORRECTION_MODES.filter((m) => m.isDefault).map((m) => m.id)).toEqual([
      'trl:sequence_mask',
      'openrlhf:tis',
    ]);
    for (const m of EXTRA_CORRECTION_MODES) {
      expect(m.citation).toContain(m.framework === 'trl' ? 'f2cd57710ae345ea' : '3c3be6234e0cb353');
      expect(Object.isFrozen(m)).toBe(true);
    }
  });

  it("parameter names and defaults are the frameworks' own", () => {
    const trl = findExtraCorrectionMode('trl:token_mask');
    expect(trl.params.map((p) => [p.name, p.default])).toEqual([
      ['vllm_importance_sampling_clip_max', 3],
      ['vllm_importance_sampling_clip_min', null],
    ]);
    const orl = findExtraCorrectionMode('openrlhf:icepop');
    expect(orl.params.map((p) => [p.name, p.default])).toEqual([
      ['is_correction_threshold_low', 0.5],
      ['is_correction_threshold_high', 5],
    ]);
  });

  it('run with no parameters is the kernel with the framework defaults; metric keys are metricNames', () => {
    for (const m of EXTRA_CORRECTION_MODES) {
      const viaTable = m.run(inputs, shape);
      const direct =
        m.framework === 'trl'
          ? trlVllmImportanceSampling(inputs, shape, { mode: m.name as 'token_mask' })
          : openrlhfVllmImportanceSampling(inputs, shape, { type: m.name as 'tis' });
      expect(viaTable, m.id).toEqual(direct);
      expect(Object.keys(viaTable.metrics)).toEqual([...m.metricNames]);
    }
  });

  it('run reproduces every golden case from the parameters as the golden file names them', () => {
    for (const c of [...goldenCases('trl'), ...goldenCases('openrlhf')]) {
      const { inputs: gi, shape: gs } = goldenBatch(c.batch);
      expectMatchesGolden(findExtraCorrectionMode(`${c.framework}:${c.mode}`).run(gi, gs, c.params), c);
    }
  });
});

describe('resolveExtraCorrectionParams', () => {
  const trl = findExtraCorrectionMode('trl:sequence_mask');
  const orl = findExtraCorrectionMode('openrlhf:seq-mask-tis');

  it('reads command-line strings, aliases, null and the OpenRLHF threshold pair', () => {
    expect(resolveExtraCorrectionParams(trl, { cap: '2' })).toEqual({
      vllm_importance_sampling_clip_max: 2,
      vllm_importance_sampling_clip_min: null,
    });
    expect(
      resolveExtraCorrectionParams(trl, { clip_min: '0.5', vllm_importance_sampling_clip_max: 'none' }),
    ).toEqual({
      vllm_importance_sampling_clip_max: null,
      vllm_importance_sampling_clip_min: 0.5,
    });
    expect(resolveExtraCorrectionParams(orl, { is_correction_threshold: '0.8_1.25' })).toEqual({
      is_correction_threshold_low: 0.8,
      is_correction_threshold_high: 1.25,
    });
    expect(resolveExtraCorrectionParams(orl, { vllm_is_truncated_threshold: '0.8 1.25' })).toEqual(
      resolveExtraCorrectionParams(orl, { low: 0.8, high: 1.25 }),
    );
    expect(resolveExtraCorrectionParams(orl, {})).toEqual({
      is_correction_threshold_low: 0.5,
      is_correction_threshold_high: 5,
    });
  });

  it('refuses unknown keys, bad values, a parameter given twice and combinations the framework refuses', () => {
    expectLabError(
      () => resolveExtraCorrectionParams(trl, { threshold: '2' }),
      'UNKNOWN_OPTION',
      'threshold',
      'clip_max',
    );
    expectLabError(() => resolveExtraCorrectionParams(trl, { cap: 'two' }), 'BAD_OPTION_VALUE', 'cap=two');
    expectLabError(() => resolveExtraCorrectionParams(trl, { cap: '' }), 'BAD_OPTION_VALUE', 'finite');
    expectLabError(
      () => resolveExtraCorrectionParams(trl, { cap: '2', clip_max: '3' }),
      'BAD_OPTION_VALUE',
      'twice',
    );
    expectLabError(
      () => resolveExtraCorrectionParams(trl, { clip_min: '5' }),
      'BAD_OPTION_VALUE',
      'must be less than',
    );
    expectLabError(
      () => resolveExtraCorrectionParams(findExtraCorrectionMode('trl:token_truncate'), { cap: 'null' }),
      'BAD_OPTION_VALUE',
      '*_truncate',
    );
    expectLabError(
      () => resolveExtraCorrectionParams(orl, { low: 'null' }),
      'BAD_OPTION_VALUE',
      'cannot be null',
    );
    expectLabError(
      () => resolveExtraCorrectionParams(orl, { is_correction_threshold: '0.5' }),
      'BAD_OPTION_VALUE',
      'two numbers',
    );
    expectLabError(
      () => resolveExtraCorrectionParams(orl, { low: 2, high: 1 }),
      'BAD_OPTION_VALUE',
      'must not exceed',
    );
    expectLabError(() => findExtraCorrectionMode('trl:seq_mask'), 'UNKNOWN_MODE', 'trl:sequence_mask');
  });

  it('labels a resolved mode in the what-if syntax', () => {
    expect(extraCorrectionLabel(trl, resolveExtraCorrectionParams(trl, { cap: 2 }))).toBe(
      'trl:sequence_mask,vllm_importance_sampling_clip_max=2,vllm_importance_sampling_clip_min=null',
    );
  });
});
