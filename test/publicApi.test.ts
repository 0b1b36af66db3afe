// The package's public entry (src/index.ts) is a deliberate list: these tests fail when a name is
// added or removed without updating the list (and docs/kernels-api.md), or when an internal helper leaks.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { OutOption, OutReturnsOption, RowOutOption } from '../src/index.js';
import * as api from '../src/index.js';
import { expectLabError } from './support/labError.js';

/** Every runtime name of the entry, grouped as in src/index.ts and docs/kernels-api.md. */
const PUBLIC = {
  errors: ['LabError', 'isLabError'],
  advantages: [
    'GRPO_DEFAULTS',
    'grpoAdvantage',
    'grpoScalarAdvantages',
    'grpoVectorizedAdvantage',
    'rlooAdvantage',
    'rlooVectorizedAdvantage',
    'opoAdvantage',
    'GPG_DEFAULTS',
    'gpgAdvantage',
    'PASSK_DEFAULTS',
    'grpoPasskAdvantage',
    'remaxAdvantage',
    'REINFORCE_PLUS_PLUS_DEFAULTS',
    'reinforcePlusPlusAdvantage',
    'reinforcePlusPlusBaselineAdvantage',
    'MULTI_TURN_OPTIMAL_TOKEN_BASELINE_DEFAULTS',
    'OPTIMAL_TOKEN_BASELINE_DEFAULTS',
    'multiTurnOptimalTokenBaselineAdvantage',
    'optimalTokenBaselineAdvantage',
    'gaeAdvantageReturn',
    'CONVENTION_PRESETS',
    'conventionSpec',
    'presetAdvantages',
  ],
  losses: [
    'VANILLA_DEFAULTS',
    'policyLossVanilla',
    'policyLossVanillaGrad',
    'GSPO_MAX_LOG_SEQ_RATIO',
    'policyLossGeoMean',
    'policyLossGspo',
    'policyLossSapo',
    'policyLossCispo',
    'policyLossGpg',
    'policyLossReinforce',
    'policyLossClipCov',
    'policyLossKlCov',
    'policyLossBypass',
    'ROLLOUT_IS_DEFAULTS',
    'RS_OPTIONS',
    'offPolicyMetrics',
    'parseRejectionRules',
    'rolloutCorrection',
    'rolloutIsWeights',
    'rolloutRejectionMask',
    'valueLoss',
    'computeEntropyLoss',
    'entropyFromLogits',
  ],
  corrections: [
    'TRL_VLLM_IS_DEFAULTS',
    'TRL_VLLM_IS_MODES',
    'trlVllmImportanceSampling',
    'OPENRLHF_IS_CORRECTION_TYPES',
    'OPENRLHF_IS_DEFAULTS',
    'openrlhfVllmImportanceSampling',
    'correctionSummary',
    'EXTRA_CORRECTION_MODES',
    'extraCorrectionLabel',
    'findExtraCorrectionMode',
    'resolveExtraCorrectionParams',
  ],
  aggregation: ['LOSS_AGG_MODES', 'aggLoss', 'aggLossDenominator', 'aggLossGrad'],
  kl: [
    'K3_LOG_RATIO_CLAMP',
    'K3_VALUE_CLAMP',
    'KL_PENALTY_NAMES',
    'adaptiveKlUpdate',
    'applyKlPenalty',
    'computeRewards',
    'createKlController',
    'klPenalty',
  ],
  masked: ['maskedMean', 'maskedRowMeans', 'maskedRowSums', 'maskedSum', 'maskedVar', 'maskedWhiten'],
  diagnostics: [
    'classifyGroups',
    'countGroupKinds',
    'LOG_RATIO_CLAMP',
    'importanceRatios',
    'kishEss',
    'truncateWeights',
    'DEFAULT_LAG_BUCKETS',
    'ratioStats',
    'ratioStatsByLag',
  ],
  mismatch: [
    'PRECISION_NAMES',
    'PRECISION_SPECS',
    'parsePrecision',
    'roundArrayToPrecision',
    'roundToPrecision',
    'sampleTruncated',
    'truncatedLogProbs',
    'truncationMask',
    'EngineAgent',
    'EngineWeightSync',
    'InferenceEngine',
  ],
  random: ['Rng'],
  statistics: [
    'pairedComparison',
    'bcaInterval',
    'signFlipTest',
    'holmAdjust',
    'wilsonInterval',
    'minimalDetectableDifference',
  ],
  environments: ['tokenEnv', 'toolEnv'],
  policies: ['ContextPolicy', 'chainLogProbGrad', 'tabularPolicy'],
  learners: [
    'Optimizer',
    'collectGroups',
    'reinforceGradient',
    'reinforceGroupAdvantages',
    'gatherLogProbs',
    'outcomeTokenRewards',
    'packTranscripts',
    'ppoUpdate',
    'sequencePolicyModel',
    'tabularModel',
    'responseMaskFromRoles',
    'tokenGroupAdvantages',
    'tokenLossAndGrad',
    'ASYNC_LEARNER_DEFAULTS',
    'CORRECTIONS',
    'runAsyncLearner',
    'EVENT_SIM_DEFAULTS',
    'simulateRollout',
    'LENGTH_DEFAULTS',
    'sampleActionTokens',
  ],
} as const;
// The experiments, the audit and the reports (Node-only) are the package's subpaths
// `reasoning-rl-labs/experiments`, `/audit` and `/report`: test/packageExports.test.ts.

/**
 * The batch types of the entry (types leave no runtime name, so they are pinned in the source of
 * src/index.ts): the kernels' input types and the out-buffer option types of batch.ts.
 */
const PUBLIC_BATCH_TYPES = [
  'FloatArray',
  'GroupLabel',
  'GroupLabels',
  'MaskArray',
  'OutcomeBatch',
  'OutOption',
  'OutReturnsOption',
  'RowOutOption',
  'Shape2',
];

describe('public API (src/index.ts)', () => {
  it('exports exactly the deliberate list, no more and no fewer', () => {
    const listed = Object.values(PUBLIC).flat();
    expect(new Set(listed).size).toBe(listed.length); // no name in two groups
    expect(Object.keys(api).sort()).toEqual([...listed].sort());
    expect(listed.length).toBe(129);
  });

  it('does not export internal helpers (validators, accumulator slots, unchecked primitives)', () => {
    for (const name of [
      'addAggSums',
      'AGG_SUM_SLOTS',
      'aggSumsOf',
      'finishAgg',
      'aggLossNamed',
      'throwBadMaskInRow',
      'throwIfNonFiniteUnderMask',
      'checkPolicyInputs',
      'checkMask',
      'checkShape',
      'checkTokenBatch',
      'checkMatrixLength',
      'groupNormalize',
      'groupMoments',
      'factorizeLabels',
      'maskedMeanOf',
      'maskedMeanUnchecked',
      'whitenValidated',
      'fastExp',
      'scanMask',
      'broadcastRows',
      'checkCorrectionInputs',
      'correctionSummaryUnchecked',
      'trlVllmIsProblem',
      'openrlhfIsProblem',
    ]) {
      expect(name in api, name).toBe(false);
    }
  });

  it('every exported function and class is callable, the environments and policies are namespaces', () => {
    for (const name of Object.values(PUBLIC).flat()) {
      const v = (api as Record<string, unknown>)[name];
      expect(v, name).toBeDefined();
      if (/^[a-z]/.test(name) && !['tokenEnv', 'toolEnv', 'tabularPolicy'].includes(name)) {
        expect(typeof v, name).toBe('function');
      }
    }
    expect(typeof api.toolEnv.step).toBe('function');
    expect(typeof api.tokenEnv.runTokenEpisode).toBe('function');
    expect(typeof api.tabularPolicy.sampleAction).toBe('function');
  });

  it('exports exactly the pinned batch types, the out-buffer option types included', () => {
    const source = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8');
    const block = /export type \{([^}]*)\} from '\.\/core\/batch\.js';/.exec(source)?.[1] ?? '';
    const names = block
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    expect(names.sort()).toEqual([...PUBLIC_BATCH_TYPES].sort());
  });

  it('the out-buffer option types are what the kernels take: the buffers come back as the results', () => {
    const tokenLevelRewards = Float32Array.of(0, 1, 0, 0);
    const responseMask = Float32Array.of(1, 1, 1, 1);
    const shape = { rows: 2, cols: 2 };
    const one: OutOption = { out: new Float32Array(4) };
    const rloo = api.rlooAdvantage({ tokenLevelRewards, responseMask, index: ['u', 'u'] }, shape, one);
    expect(rloo.advantages).toBe(one.out);
    const two: OutReturnsOption = { out: new Float32Array(4), outReturns: new Float32Array(4) };
    const remax = api.remaxAdvantage(
      { tokenLevelRewards, rewardBaselines: [0, 0], responseMask },
      shape,
      two,
    );
    expect(remax.advantages).toBe(two.out);
    expect(remax.returns).toBe(two.outReturns);
    const row: RowOutOption = { out: new Float64Array(2) };
    expect(api.grpoScalarAdvantages([1, 0], ['u', 'u'], row)).toBe(row.out);
    expect(api.presetAdvantages('nemo-rl', [1, 0], ['u', 'u'], row)).toBe(row.out);
  });

  it('computes a GRPO advantage through the public entry as verl does on a tiny batch', () => {
    // Two rows of one group, rewards 1 and 0 on the last token: mean 0.5, torch.std = sqrt(0.5).
    const r = Float32Array.of(0, 1, 0, 0);
    const m = Float32Array.of(1, 1, 1, 1);
    const { advantages } = api.grpoAdvantage(
      { tokenLevelRewards: r, responseMask: m, index: ['u', 'u'] },
      { rows: 2, cols: 2 },
    );
    const a = 0.5 / (Math.sqrt(0.5) + 1e-6);
    expect(Array.from(advantages)).toEqual([a, a, -a, -a].map(Math.fround));
  });

  it('arrays passed positionally are a type error, and a LabError naming the field from JavaScript', () => {
    const x = Float32Array.of(0, 0);
    const shape = { rows: 1, cols: 2 };
    expectLabError(
      // @ts-expect-error the kernels take one named inputs object, not four positional arrays
      () => api.policyLossVanilla(x, x, x, x, shape),
      'SHAPE_MISMATCH',
      'shape',
    );
    expectLabError(
      // @ts-expect-error rewards and mask are fields of one OutcomeBatch
      () => api.grpoAdvantage(x, x, ['u'], shape),
      'SHAPE_MISMATCH',
      'shape',
    );
    // a field left out of the inputs object is named
    expectLabError(
      // @ts-expect-error responseMask is required
      () => api.policyLossVanilla({ oldLogProb: x, logProb: x, advantages: x }, shape),
      'SHAPE_MISMATCH',
      'response_mask: expected 2 values for shape [1,2], got no array',
    );
  });
});
