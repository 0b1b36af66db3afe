/**
 * `mismatch`: option validation (each bad value a LabError naming the option), determinism (same
 * seed, same record bytes), and the exact-engine property: with fp64, no truncation and no lag the
 * engine's log-probs equal the trainer's bit for bit, so every correction is the identity and every
 * arm trains exactly as `none` (this fails if engine log-probs are misaligned with the batch, or a
 * correction changes an on-policy batch).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LabError } from '../../core/errors.js';
import { toJson } from '../../report/records.js';
import { collapseCheck } from '../../train/mismatchLearner.js';
import { configOf, runExperiment } from '../options.js';
import type { RunRecord } from '../types.js';
import { checkMismatchOptions, MISMATCH_OPTIONS, mismatch } from './mismatch.js';

/** A tiny run: from scratch (no pretraining), few tasks and updates, no dose rows. */
const TINY = {
  init: 'scratch',
  updates: 3,
  tasks_per_update: 2,
  group_size: 4,
  eval_tasks: 10,
  eval_every: 1,
  dose_precisions: '',
  dose_top_p: '',
  dose_lags: '',
} as const;

function optionError(input: Record<string, unknown>): LabError {
  try {
    checkMismatchOptions(configOf(mismatch, input));
  } catch (e) {
    if (e instanceof LabError) return e;
    throw e;
  }
  throw new Error(`no error for ${JSON.stringify(input)}`);
}

describe('mismatch options', () => {
  it('refuses each bad value with a LabError naming the option', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ top_p: 0 }, 'top_p'],
      [{ top_p: 1.5 }, 'top_p'],
      [{ top_k: 0 }, 'top_k'],
      [{ engine_precision: 'fp7' }, 'engine_precision'],
      [{ engine_lag: -1 }, 'engine_lag'],
      [{ engine_lag: 0.5 }, 'engine_lag'],
      [{ icepop_lo: 5, icepop_hi: 5 }, 'icepop_lo'],
      [{ seq_mask_lo: 3 }, 'seq_mask_lo'],
      [{ geo_lo: 1.01 }, 'geo_lo'],
      [{ tis_threshold: 0 }, 'tis_threshold'],
      [{ arms: 'none,tis' }, 'arms'],
      [{ arms: 'none,none' }, 'arms'],
      [{ dose_precisions: 'bf16,fp4' }, 'dose_precisions'],
      [{ dose_top_p: '0' }, 'dose_top_p'],
      [{ dose_lags: '-1' }, 'dose_lags'],
    ];
    for (const [input, key] of cases) {
      const e = optionError(input);
      expect(e.code, JSON.stringify(input)).toBe('BAD_OPTION_VALUE');
      expect(e.message, JSON.stringify(input)).toContain(key);
    }
  });

  it('accepts the defaults and builds one dose row per source value plus the exact engine', () => {
    const { arms, dose } = checkMismatchOptions(configOf(mismatch, {}));
    expect(arms).toHaveLength(8);
    expect(dose.map((d) => `${d.source}:${d.dose}`)).toEqual([
      'exact:fp64, top_p 1, lag 0',
      'precision:bf16',
      'precision:fp8',
      'top_p:0.9',
      'lag:2',
    ]);
    expect(Object.keys(MISMATCH_OPTIONS.shape)).toContain('engine_precision');
  });
});

describe('collapseCheck', () => {
  it('flags success below ratio x best only once the best is high enough', () => {
    expect(collapseCheck(0.2, 0.6, 0.5, 0.2)).toBe(true);
    expect(collapseCheck(0.3, 0.6, 0.5, 0.2)).toBe(false);
    expect(collapseCheck(0.05, 0.15, 0.5, 0.2)).toBe(false);
  });
});

describe('mismatch runs', () => {
  let a: RunRecord;
  let b: RunRecord;
  let exact: RunRecord;
  beforeAll(async () => {
    const noisy = { ...TINY, arms: 'none,token_tis,icepop', engine_precision: 'fp8', top_p: 0.9 };
    a = await runExperiment(mismatch, noisy, { seed: 3 });
    b = await runExperiment(mismatch, noisy, { seed: 3 });
    exact = await runExperiment(
      mismatch,
      { ...TINY, engine_precision: 'fp64', top_p: 1, engine_lag: 0 },
      { seed: 3 },
    );
  }, 120_000);

  it('is deterministic: same seed, same record bytes (timing aside)', () => {
    expect(toJson({ ...a, timing: { wall_ms: 0 } })).toBe(toJson({ ...b, timing: { wall_ms: 0 } }));
    expect((a.tables.arms ?? []).map((r) => r.arm)).toEqual(['none', 'token_tis', 'icepop']);
  });

  it('measures a mismatch when the engine differs (fp8, top_p 0.9)', () => {
    for (const row of a.tables.arms ?? []) expect(row.k3_end as number).toBeGreaterThan(0);
  });

  it('with the exact engine every arm is the identity: no mismatch and the same training as none', () => {
    const rows = exact.tables.arms ?? [];
    expect(rows).toHaveLength(8);
    const none = rows[0] as Record<string, unknown>;
    for (const row of rows) {
      expect(row.k3_end, String(row.arm)).toBe(0);
      expect(row.max_ratio, String(row.arm)).toBe(1);
      expect(row.ess_mean, String(row.arm)).toBe(1);
      expect(row.masked_fraction_mean, String(row.arm)).toBe(0);
      expect(row.final_eval_success, String(row.arm)).toBe(none.final_eval_success);
      expect(row.grad_norm_mean, String(row.arm)).toBe(none.grad_norm_mean);
    }
  });
});
