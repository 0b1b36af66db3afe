/**
 * `--what-if trl:MODE[,key=value...]` and `--what-if openrlhf:TYPE[,key=value...]`: TRL's four
 * `vllm_importance_sampling_mode`s and OpenRLHF's `tis` / `icepop` / `seq-mask-tis`, folded one
 * sequence at a time. The modes, their parameters (the frameworks' own config names, defaults and
 * checks) and the code they reproduce are the table of src/core/extraCorrectionModes.ts; the batch
 * kernels are src/core/trlVllmIs.ts and src/core/openrlhfVllmIs.ts (golden cases from a numpy
 * transcription of each framework). This file computes the same weights per token from a
 * sequence's statistics plus a few threshold-dependent SQL aggregates, and the same metrics: the
 * framework's own (`sampling/...` for TRL, `vllm_kl` for OpenRLHF) and the verl-definition summary
 * of correctionSummary.ts (`is_mean`, `is_max`, `is_min`, `is_std`, `eff_sample_size`,
 * `masked_fraction`, `seq_masked_fraction`, kept/rejected tokens and sequences).
 * frameworkWhatIf.test.ts checks the fold against those kernels on materialised batches.
 *
 * Weights per loss token t of a row b (ℓ = old − rollout, unclamped, as both frameworks do):
 *   token clamp (trl token_truncate, openrlhf tis):  w = clamp(e^ℓ, lo, hi)
 *   token mask  (trl token_mask, openrlhf icepop):   w = e^ℓ if lo ≤ e^ℓ ≤ hi, else 0 (rejected)
 *   row ratio   (trl sequence_*):                    r_b = e^{Σℓ}, clamped or 0 outside, on every token
 *   row filter  (openrlhf seq-mask-tis):             keep the row iff lo ≤ e^{Σℓ/n} ≤ hi; w = e^ℓ
 * A bound that is null is no bound.
 */

import { LabError } from '../../core/errors.js';
import { findExtraCorrectionMode, resolveExtraCorrectionParams } from '../../core/extraCorrectionModes.js';
import { MASKED_MEAN_EPS } from '../../core/maskedPrimitives.js';
import type { MismatchAccumulator } from '../../core/mismatchFold.js';
import { clampSql, type SequenceStats } from '../../core/sequenceMismatchStats.js';
import type { Correction, WhatIfSpec } from './correction.js';

type Kind = 'token-clamp' | 'token-mask' | 'row-ratio-clamp' | 'row-ratio-mask' | 'row-filter';

const KIND: Record<string, Kind> = {
  'trl:token_truncate': 'token-clamp',
  'trl:token_mask': 'token-mask',
  'trl:sequence_truncate': 'row-ratio-clamp',
  'trl:sequence_mask': 'row-ratio-mask',
  'openrlhf:tis': 'token-clamp',
  'openrlhf:icepop': 'token-mask',
  'openrlhf:seq-mask-tis': 'row-filter',
};

const sqlNum = (x: number) => (Number.isFinite(x) ? String(x) : x > 0 ? "'inf'::DOUBLE" : "'-inf'::DOUBLE");

/** One TRL or OpenRLHF correction, folded per sequence. */
export class FrameworkCorrection implements Correction {
  private readonly kind: Kind;
  private readonly framework: 'trl' | 'openrlhf';
  private readonly lo: number;
  private readonly hi: number;
  private N = 0;
  private rows = 0;
  private sum = 0;
  private sumSq = 0;
  private max = Number.NEGATIVE_INFINITY;
  private min = Number.POSITIVE_INFINITY;
  private rejected = 0;
  private rejectedRows = 0;
  // TRL's ratio metrics: over tokens (token modes) or rows (sequence modes)
  private rSum = 0;
  private rN = 0;
  private rMax = Number.NEGATIVE_INFINITY;
  private rMin = Number.POSITIVE_INFINITY;
  private sAbs = 0;
  private maxAbs = Number.NEGATIVE_INFINITY;
  private sNegL = 0;
  /** The weights' scale for a scale-free ESS: all weights are kept relative to the first max seen. */
  private readonly tokenLevel: boolean;

  constructor(readonly spec: WhatIfSpec) {
    const id = spec.values.mode as string;
    let params: Record<string, number | null>;
    try {
      const mode = findExtraCorrectionMode(id);
      const given: Record<string, string> = { ...spec.values };
      delete given.mode;
      params = resolveExtraCorrectionParams(mode, given);
      this.framework = mode.framework;
    } catch (e) {
      throw new LabError('BAD_CLI', `--what-if '${spec.text}': ${(e as Error).message}`, {
        cause: e,
        details: { field: '--what-if', value: spec.text },
      });
    }
    this.kind = KIND[id] as Kind;
    const lo =
      this.framework === 'trl'
        ? params.vllm_importance_sampling_clip_min
        : params.is_correction_threshold_low;
    const hi =
      this.framework === 'trl'
        ? params.vllm_importance_sampling_clip_max
        : params.is_correction_threshold_high;
    this.lo = lo ?? Number.NEGATIVE_INFINITY;
    this.hi = hi ?? Number.POSITIVE_INFINITY;
    this.tokenLevel = this.kind === 'token-clamp' || this.kind === 'token-mask';
  }

  sql(p: string): string[] {
    const lo = sqlNum(this.lo);
    const hi = sqlNum(this.hi);
    if (this.kind === 'token-clamp') {
      const w = clampSql('el', lo, hi);
      return [
        `sum(${w}) AS ${p}_s`,
        `sum(${w} * ${w}) AS ${p}_s2`,
        `max(${w}) AS ${p}_max`,
        `min(${w}) AS ${p}_min`,
      ];
    }
    if (this.kind === 'token-mask') {
      const keep = `(el >= ${lo} AND el <= ${hi})`;
      return [
        `coalesce(sum(el) FILTER (WHERE ${keep}), 0) AS ${p}_s`,
        `coalesce(sum(el * el) FILTER (WHERE ${keep}), 0) AS ${p}_s2`,
        `max(CASE WHEN ${keep} THEN el WHEN el IS NOT NULL THEN 0 END) AS ${p}_max`,
        `min(CASE WHEN ${keep} THEN el WHEN el IS NOT NULL THEN 0 END) AS ${p}_min`,
        `count(*) FILTER (WHERE NOT ${keep})::DOUBLE AS ${p}_rej`,
      ];
    }
    if (this.kind === 'row-filter') {
      return [`sum(el) AS ${p}_s`, `sum(el * el) AS ${p}_s2`, `max(el) AS ${p}_max`, `min(el) AS ${p}_min`];
    }
    return [];
  }

  add(s: SequenceStats, row: Record<string, unknown>, p: string): void {
    const get = (k: string) => Number(row[`${p}_${k}`]);
    const n = s.n;
    this.N += n;
    this.rows++;
    this.sAbs += s.sAbs;
    this.maxAbs = Math.max(this.maxAbs, s.maxAbs);
    this.sNegL += -s.sL;
    let sum: number;
    let sumSq: number;
    let max: number;
    let min: number;
    let rej = 0;
    if (this.kind === 'token-clamp' || this.kind === 'token-mask') {
      sum = get('s');
      sumSq = get('s2');
      max = get('max');
      min = get('min');
      if (this.kind === 'token-mask') rej = get('rej');
      this.rSum += sum;
      this.rN += n;
      this.rMax = Math.max(this.rMax, max);
      this.rMin = Math.min(this.rMin, min);
    } else if (this.kind === 'row-filter') {
      const g = Math.exp(s.sL / n);
      const keep = g >= this.lo && g <= this.hi;
      sum = keep ? get('s') : 0;
      sumSq = keep ? get('s2') : 0;
      max = keep ? get('max') : 0;
      min = keep ? get('min') : 0;
      rej = keep ? 0 : n;
    } else {
      const r = Math.exp(s.sL);
      let v: number;
      if (this.kind === 'row-ratio-clamp') v = Math.min(Math.max(r, this.lo), this.hi);
      else {
        v = r < this.lo || r > this.hi ? 0 : r;
        if (v === 0 && r !== 0) rej = n;
      }
      sum = n * v;
      sumSq = n * v * v;
      max = v;
      min = v;
      this.rSum += v;
      this.rN += 1;
      this.rMax = Math.max(this.rMax, v);
      this.rMin = Math.min(this.rMin, v);
    }
    if (!Number.isFinite(sum) || !Number.isFinite(sumSq)) {
      throw new LabError(
        'NON_FINITE',
        `--what-if '${this.spec.text}': a weight overflows (a log-ratio past 709 with no upper bound); set an upper bound`,
        { details: { field: '--what-if' } },
      );
    }
    this.sum += sum;
    this.sumSq += sumSq;
    this.max = Math.max(this.max, max);
    this.min = Math.min(this.min, min);
    this.rejected += rej;
    if (rej > 0) this.rejectedRows++;
  }

  finish(_overall: MismatchAccumulator): Record<string, number> {
    const N = this.N;
    const den = N + MASKED_MEAN_EPS;
    const mean = this.sum / den;
    const meanSq = this.sumSq / den;
    const ess = this.max === 0 ? 0 : Math.min((this.sum * this.sum) / this.sumSq, N) / N;
    const out: Record<string, number> = {};
    if (this.framework === 'trl') {
      out['sampling/sampling_logp_difference/mean'] = this.sAbs / N;
      out['sampling/sampling_logp_difference/max'] = this.maxAbs;
      out['sampling/importance_sampling_ratio/min'] = this.rMin;
      out['sampling/importance_sampling_ratio/mean'] = this.rSum / this.rN;
      out['sampling/importance_sampling_ratio/max'] = this.rMax;
    } else {
      out.vllm_kl = this.sNegL / N;
    }
    Object.assign(out, {
      is_mean: mean,
      is_max: this.max,
      is_min: this.min,
      is_std: N > 1 ? Math.sqrt(Math.max(meanSq - mean * mean, 0)) : 0,
      eff_sample_size: ess,
      masked_fraction: this.rejected / den,
      seq_masked_fraction: this.rejectedRows / this.rows,
      kept_tokens: N - this.rejected,
      rejected_tokens: this.rejected,
      rejected_sequences: this.rejectedRows,
    });
    void this.tokenLevel;
    return out;
  }
}
