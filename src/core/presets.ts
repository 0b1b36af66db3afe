/**
 * Convention presets: how different systems turn a group of scalar rewards into advantages, for
 * side-by-side comparison on the same batch. Each preset cites the source it was read from; where a
 * behaviour is not in a source we could read, it is left out (see `notes`).
 */

import { checkOutNotAliased, type GroupLabels, outputBuffer64, type RowOutOption } from './batch.js';
import { LabError } from './errors.js';
import { factorizeLabels, type GroupIds, groupMembers } from './groupwise.js';
import { checkFiniteScores, grpoScalarAdvantages, type SingletonRule, type StdKind } from './grpo.js';

export type ConventionPreset = 'verl' | 'trl' | 'openrlhf' | 'nemo-rl' | 'teaching';

export interface ConventionSpec {
  name: ConventionPreset;
  std: StdKind;
  /** Added to the std (NeMo-RL adds it only where std > 0 and otherwise does not divide). */
  epsilon: number;
  singleton: SingletonRule;
  /** Group mean including the sample itself (GRPO) or the mean of the other members (RLOO-style). */
  baseline?: 'group-mean' | 'leave-one-out';
  /** Repository, file and function the behaviour was read from. */
  source: string;
  notes: string;
}

const PRESET_TABLE: Record<ConventionPreset, ConventionSpec> = {
  verl: {
    name: 'verl',
    std: 'unbiased',
    epsilon: 1e-6,
    singleton: 'verl',
    baseline: 'group-mean',
    source:
      'volcengine/verl verl/trainer/ppo/core_algos.py::compute_grpo_outcome_advantage (commit b178a3cd, see docs/verl-semantics.md §2)',
    notes:
      'torch.std (n-1); (s - mean)/(std + 1e-6); a group of one gets mean 0, std 1, so s/(1+1e-6) with the float32 constant, not 0.',
  },
  trl: {
    name: 'trl',
    std: 'unbiased',
    epsilon: 1e-4,
    singleton: 'error',
    baseline: 'group-mean',
    source:
      'huggingface/trl trl/trainer/grpo_trainer.py::GRPOTrainer._generate_and_score_completions (advantages = rewards - group mean; / (std + 1e-4) when scale_rewards) and GRPOTrainer.__init__ (num_generations < 2 raises ValueError); read at stored commit 000bb3db',
    notes:
      'Groups are contiguous blocks of num_generations rows (rewards.view(-1, G)), not labels; here they are the label groups. std is torch .std (unbiased). Later TRL versions turned scale_rewards into a choice (group/batch/none); this preset is the group-scaled behaviour read in that source.',
  },
  openrlhf: {
    name: 'openrlhf',
    std: 'unbiased',
    epsilon: 1e-9,
    singleton: 'error',
    baseline: 'group-mean',
    source:
      "OpenRLHF/OpenRLHF openrlhf/trainer/ppo_utils/experience_maker.py::RemoteExperienceMaker.compute_advantages_and_returns (advantage_estimator 'group_norm': (r - mean)/(std + 1e-9)), read at commit 89308a0b; openrlhf/cli/train_ppo_ray.py asserts n_samples_per_prompt > 1 for group_norm",
    notes:
      'Groups are contiguous blocks of n_samples_per_prompt rows; here they are the label groups. The resulting reward is then spread over tokens by OpenRLHF cumulative returns (gamma forced to 1), which this scalar preset does not model.',
  },
  'nemo-rl': {
    name: 'nemo-rl',
    std: 'unbiased',
    epsilon: 1e-6,
    singleton: 'zero',
    baseline: 'leave-one-out',
    source:
      'NVIDIA-NeMo/RL nemo_rl/algorithms/utils.py::calculate_baseline_and_std_per_prompt (read at commit 00439539) called by nemo_rl/algorithms/advantage_estimator.py::GRPOAdvantageEstimator.compute_advantage (read at commit 00925dd1; defaults use_leave_one_out_baseline=True, normalize_rewards=True)',
    notes:
      'Baseline = mean of the OTHER members; std = unbiased std of the other members (k = n-1 of them), so a group of 2 is never std-scaled (k = 1 gives 0*inf -> nan_to_num -> 0); advantage (r - baseline)/(std + 1e-6) where std > 0, else r - baseline (older nemo_rl/algorithms/grpo.py versions divided by std without the 1e-6); a group of one gets baseline = its reward, advantage 0. Groups are rows with identical prompt tokens (prompt ids); here they are the label groups.',
  },
  teaching: {
    name: 'teaching',
    std: 'population',
    epsilon: 1e-6,
    singleton: 'zero',
    baseline: 'group-mean',
    source:
      'course page (seed/course-page.en.md): labs/agent.py::group_advantages "uses the population std, unlike the upstream torch.std"; formula A_i = (r_i - mean(r))/(std(r) + eps)',
    notes:
      "The page does not give eps; 1e-6 (verl's) is used so the std kind is the only difference from verl. With the population std a group of one has std 0 and a centred reward of 0, so its advantage is 0 by the formula itself.",
  },
};

/** Every preset's conventions and sources; frozen to the leaves (a changed epsilon would silently change every comparison). */
export const CONVENTION_PRESETS: Readonly<Record<ConventionPreset, Readonly<ConventionSpec>>> = Object.freeze(
  Object.fromEntries(Object.entries(PRESET_TABLE).map(([k, v]) => [k, Object.freeze(v)])) as Record<
    ConventionPreset,
    ConventionSpec
  >,
);

const PRESET_NAMES = Object.keys(CONVENTION_PRESETS) as ConventionPreset[];

/** The spec of a preset; UNKNOWN_MODE for a name that is not one of the five. */
export function conventionSpec(preset: ConventionPreset): ConventionSpec {
  const spec = (CONVENTION_PRESETS as Record<string, ConventionSpec | undefined>)[preset];
  if (!spec) {
    throw new LabError(
      'UNKNOWN_MODE',
      `preset: unknown convention preset '${preset}' (expected ${PRESET_NAMES.join(', ')})`,
      { details: { field: 'preset', value: preset } },
    );
  }
  return spec;
}

/**
 * NeMo-RL's leave-one-out baseline and std, per row, in float64:
 * `b_i = mean_{j≠i} r_j`, `σ_i = unbiased std of {r_j : j≠i}` (0 when fewer than 2 others),
 * `a_i = (r_i − b_i)/(σ_i + eps)` where σ_i > 0, else `r_i − b_i`; a group of one gets 0.
 * Writes every position of `out` (it reads other rows' scores: the caller checked that `out` and
 * `scores` do not overlap).
 */
function leaveOneOutAdvantages(
  scores: ArrayLike<number>,
  groups: GroupIds,
  epsilon: number,
  out: Float64Array,
): Float64Array {
  for (const rows of groupMembers(groups)) {
    const n = rows.length;
    if (n < 2) {
      for (const i of rows) out[i] = 0; // baseline = own reward -> advantage 0
      continue;
    }
    const k = n - 1;
    for (const i of rows) {
      const r = scores[i] as number;
      let others = 0;
      for (const j of rows) if (j !== i) others += scores[j] as number;
      const baseline = others / k;
      let ss = 0;
      for (const j of rows) {
        if (j === i) continue;
        const d = (scores[j] as number) - baseline;
        ss += d * d;
      }
      if (!Number.isFinite(ss) || !Number.isFinite(baseline)) {
        // an infinite sigma would silently give advantage 0
        throw new LabError(
          'NON_FINITE',
          `scores: row ${i} is too large for float64 statistics (its leave-one-out sum or squares overflow)`,
          { details: { field: 'scores', row: i } },
        );
      }
      const sigma = k >= 2 ? Math.sqrt(ss / (k - 1)) : 0;
      const centred = r - baseline;
      out[i] = sigma > 0 ? centred / (sigma + epsilon) : centred + 0;
    }
  }
  return out;
}

/**
 * Scalar advantages of one score per row under a preset's conventions (see {@link CONVENTION_PRESETS}).
 * Group-mean presets go through {@link grpoScalarAdvantages} with the preset's std kind, epsilon and
 * singleton rule; `nemo-rl` uses the leave-one-out baseline and std. Float64.
 * `options.out`: a length-B Float64Array to write into (see {@link RowOutOption}); it is then the result.
 * Errors: UNKNOWN_MODE preset, NON_FINITE score, SHAPE_MISMATCH labels, SINGLETON_GROUP (trl, openrlhf),
 * SHAPE_MISMATCH / BAD_ARGUMENT `out` (wrong length / not a Float64Array).
 */
export function presetAdvantages(
  preset: ConventionPreset,
  scores: ArrayLike<number>,
  index: GroupLabels,
  options: RowOutOption = {},
): Float64Array {
  const spec = conventionSpec(preset);
  checkOutNotAliased(options.out, 'out', { scores, index });
  if (spec.baseline === 'leave-one-out') {
    checkFiniteScores(scores);
    const groups = factorizeLabels(index, scores.length);
    const out = outputBuffer64(options.out, scores.length, `[${scores.length}]`);
    return leaveOneOutAdvantages(scores, groups, spec.epsilon, out);
  }
  return grpoScalarAdvantages(scores, index, {
    std: spec.std,
    epsilon: spec.epsilon,
    singleton: spec.singleton,
    out: options.out ?? null,
  });
}
