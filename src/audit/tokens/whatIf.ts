/**
 * `--what-if SPEC`: what a rollout correction would have done on the dump, as the metrics the
 * framework logs for it. SPEC is `key=value,key=value` in the framework's own config names; a
 * comma-separated value continues the previous key (verl: `rollout_rs=token_k1,seq_max_k2`).
 *
 * The families are a table (`WHAT_IF_FAMILIES`): a family claims the specs whose keys it owns and
 * builds a `Correction`, which (1) names the per-token SQL aggregates it needs beyond the
 * threshold-free statistics of sequenceStats.ts (those that depend on its thresholds, e.g. how many
 * tokens a token-level rule rejects), and (2) folds one row per sequence into its metrics. Adding a
 * framework's modes is one entry here and one Correction class.
 *
 * verl (`rollout_is`, `rollout_is_threshold`, `rollout_rs`, `rollout_rs_threshold`): the metrics of
 * `compute_rollout_correction_and_rejection_mask` (verl/trainer/ppo/rollout_corr_helper.py; kernel
 * src/core/rolloutCorrection.ts, whose formulas are mirrored here per sequence; the fold equals the
 * kernel on the materialised batch, whatIf.test.ts) plus `kept_tokens`, `rejected_tokens`,
 * `rejected_sequences` from the new response mask.
 */
import { LabError } from '../../core/errors.js';
import { MASKED_MEAN_EPS } from '../../core/maskedPrimitives.js';
import { ListStats, type MismatchAccumulator } from '../../core/mismatchFold.js';
import { parseRejectionRules, type RsRule } from '../../core/rolloutCorrection.js';
import { clampSql, type SequenceStats } from '../../core/sequenceMismatchStats.js';
import type { Correction, WhatIfSpec } from './correction.js';
import { FrameworkCorrection } from './frameworkWhatIf.js';

const maskedMeanOf = (sum: number, count: number) => sum / (count + MASKED_MEAN_EPS);
const CLAMP = 20;
const clamp = (x: number) => Math.min(Math.max(x, -CLAMP), CLAMP);

/** A parsed `--what-if`: the spec as given, its family and the key/value pairs. */
export type { Correction, WhatIfSpec } from './correction.js';

interface Family {
  name: string;
  /** Keys this family owns; a spec's first key picks the family. */
  keys: readonly string[];
  build(spec: WhatIfSpec): Correction;
}

/** Splits `a=1,b=x,y,c=2` into {a:'1', b:'x,y', c:'2'}; a duplicated key or a leading bare value is an error. */
export function parseWhatIf(text: string): WhatIfSpec {
  const values: Record<string, string> = {};
  let last: string | null = null;
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq < 0 && last === null && /^[a-z]+:[a-z_-]+$/.test(part)) {
      // `trl:sequence_mask`, `openrlhf:icepop`: a framework's mode (frameworkWhatIf.ts)
      values.mode = part;
      continue;
    }
    if (eq < 0) {
      if (last === null) throw bad(text, `'${part}' has no key (expected key=value)`);
      values[last] = `${values[last]},${part}`;
      continue;
    }
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === '' || value === '') throw bad(text, `'${part}' needs a key and a value`);
    if (key in values) throw bad(text, `key '${key}' is given twice`);
    values[key] = value;
    last = key;
  }
  const first = Object.keys(values)[0];
  if (first === undefined) throw bad(text, 'is empty');
  const family =
    values.mode !== undefined
      ? WHAT_IF_FAMILIES.find((f) => f.name === 'framework')
      : WHAT_IF_FAMILIES.find((f) => Object.keys(values).every((k) => f.keys.includes(k)));
  if (!family) {
    const known = WHAT_IF_FAMILIES.map((f) => `${f.name}: ${f.keys.join(', ')}`).join('; ');
    throw bad(text, `unknown key(s) ${Object.keys(values).join(', ')} (known: ${known})`);
  }
  return { text, family: family.name, values };
}

function bad(text: string, why: string): LabError {
  return new LabError('BAD_CLI', `--what-if '${text}': ${why}`, {
    details: { field: '--what-if', value: text },
  });
}

/** Builds the correction of a parsed spec. */
export function buildCorrection(spec: WhatIfSpec): Correction {
  const family = WHAT_IF_FAMILIES.find((f) => f.name === spec.family);
  if (!family) throw bad(spec.text, `unknown family ${spec.family}`);
  return family.build(spec);
}

// ---------------------------------------------------------------- verl

// Over the feature relation of sequenceStats.ts TOKEN_FEATURE_SQL (lc = clamped Δ, elc = exp(lc)).
const STAT_SQL = ['(-lc)', '(0.5 * lc * lc)', '(elc - 1 - lc)'] as const;

interface RuleState {
  rule: RsRule;
  isK1: boolean;
  token: boolean;
  kind: 'token' | 'seq_sum' | 'seq_mean' | 'seq_max';
  k: 1 | 2 | 3;
  lo: number;
  up: number;
  sum: number;
  fracHigh: number;
  fracLow: number;
  sC: number;
  sC2: number;
  max: number;
  min: number;
  seq: ListStats;
  seqHigh: number;
  seqLow: number;
  rejectedTokens: number;
  rejectedRows: number;
}

function num(v: string, text: string, key: string): number {
  const x = Number(v);
  if (v.trim() === '' || !Number.isFinite(x)) throw bad(text, `${key}=${v} is not a number`);
  return x;
}

/** verl's rollout correction: IS weights (`rollout_is`) and/or rejection (`rollout_rs`). */
class VerlCorrection implements Correction {
  private isLevel: 'token' | 'sequence' | null = null;
  private tau = 2.0;
  private rules: RuleState[] = [];
  // IS accumulators
  private N = 0;
  private rows = 0;
  private validRows = 0;
  private sW = 0;
  private high = 0;
  private low = 0;
  private sC = 0;
  private sC2 = 0;
  private wMax = Number.NEGATIVE_INFINITY;
  private wMin = Number.POSITIVE_INFINITY;
  private seqSumMax = Number.NEGATIVE_INFINITY;
  private seqSumMin = Number.POSITIVE_INFINITY;
  private seqHigh = 0;
  private seqLow = 0;
  private seqW = new ListStats();
  private seqWHigh = 0;
  private seqWLow = 0;
  private rejected = 0;
  private rowsRejected = 0;

  constructor(readonly spec: WhatIfSpec) {
    const v = spec.values;
    const isText = v.rollout_is;
    if (isText !== undefined && isText !== 'null' && isText !== 'None') {
      if (isText !== 'token' && isText !== 'sequence') {
        throw bad(spec.text, `rollout_is=${isText}: expected token or sequence`);
      }
      this.isLevel = isText;
    }
    if (v.rollout_is_threshold !== undefined) {
      this.tau = num(v.rollout_is_threshold, spec.text, 'rollout_is_threshold');
      if (!(this.tau > 0)) throw bad(spec.text, 'rollout_is_threshold must be positive');
      if (this.isLevel === null) throw bad(spec.text, 'rollout_is_threshold needs rollout_is=token|sequence');
    }
    const rs = v.rollout_rs;
    if (rs !== undefined && rs !== 'null' && rs !== 'None') {
      if (v.rollout_rs_threshold === undefined) throw bad(spec.text, 'rollout_rs needs rollout_rs_threshold');
      let parsed: RsRule[];
      try {
        parsed = parseRejectionRules(rs, v.rollout_rs_threshold);
      } catch (e) {
        throw bad(spec.text, (e as Error).message);
      }
      this.rules = parsed.map((rule) => {
        const isK1 = rule.option.endsWith('k1');
        const kind = rule.option.startsWith('token')
          ? 'token'
          : (rule.option.slice(0, rule.option.lastIndexOf('_')) as RuleState['kind']);
        return {
          rule,
          isK1,
          token: kind === 'token',
          kind,
          k: Number(rule.option.at(-1)) as 1 | 2 | 3,
          up: isK1 ? Math.log(rule.upper) : rule.upper,
          lo: isK1 ? Math.log(rule.lower ?? 1 / rule.upper) : 0,
          sum: 0,
          fracHigh: 0,
          fracLow: 0,
          sC: 0,
          sC2: 0,
          max: Number.NEGATIVE_INFINITY,
          min: Number.POSITIVE_INFINITY,
          seq: new ListStats(),
          seqHigh: 0,
          seqLow: 0,
          rejectedTokens: 0,
          rejectedRows: 0,
        };
      });
    } else if (v.rollout_rs_threshold !== undefined) {
      throw bad(spec.text, 'rollout_rs_threshold needs rollout_rs');
    }
    if (this.isLevel === null && this.rules.length === 0) {
      throw bad(spec.text, 'names neither rollout_is=token|sequence nor rollout_rs');
    }
  }

  sql(p: string): string[] {
    const cols: string[] = [];
    if (this.isLevel === 'token') {
      const w = 'elc';
      const c = clampSql(w, String(1 / this.tau), String(this.tau));
      cols.push(`count(*) FILTER (WHERE ${w} > ${this.tau})::DOUBLE AS ${p}_is_high`);
      cols.push(`count(*) FILTER (WHERE ${w} < ${1 / this.tau})::DOUBLE AS ${p}_is_low`);
      cols.push(`sum(${c}) AS ${p}_is_c`, `sum(${c} * ${c}) AS ${p}_is_c2`);
    }
    const tokenKeeps: string[] = [];
    for (const [i, r] of this.rules.entries()) {
      if (!r.token) continue;
      const stat = STAT_SQL[r.k - 1] as string;
      const keep = r.isK1 ? `(${stat} >= ${r.lo} AND ${stat} <= ${r.up})` : `(${stat} <= ${r.up})`;
      tokenKeeps.push(keep);
      const c = clampSql(stat, String(r.isK1 ? r.lo : 0), String(r.up));
      cols.push(`count(*) FILTER (WHERE ${stat} > ${r.up})::DOUBLE AS ${p}_r${i}_high`);
      cols.push(`count(*) FILTER (WHERE ${stat} < ${r.lo})::DOUBLE AS ${p}_r${i}_low`);
      cols.push(`sum(${c}) AS ${p}_r${i}_c`, `sum(${c} * ${c}) AS ${p}_r${i}_c2`);
      cols.push(`count(*) FILTER (WHERE NOT ${keep})::DOUBLE AS ${p}_r${i}_rej`);
    }
    if (tokenKeeps.length > 0) {
      cols.push(`count(*) FILTER (WHERE NOT (${tokenKeeps.join(' AND ')}))::DOUBLE AS ${p}_tok_rej`);
    }
    return cols;
  }

  add(s: SequenceStats, row: Record<string, unknown>, p: string): void {
    const get = (k: string) => Number(row[`${p}_${k}`]);
    const n = s.n;
    this.N += n;
    this.rows++;
    this.validRows++;
    if (this.isLevel === 'token') {
      this.sW += s.sW;
      this.high += get('is_high');
      this.low += get('is_low');
      this.sC += get('is_c');
      this.sC2 += get('is_c2');
      this.wMax = Math.max(this.wMax, Math.exp(clamp(s.maxL)));
      this.wMin = Math.min(this.wMin, Math.exp(clamp(s.minL)));
      this.addSeqW(maskedMeanOf(s.sW, n));
    } else if (this.isLevel === 'sequence') {
      const v = Math.exp(clamp(s.sL));
      this.sW += n * v;
      this.seqSumMax = Math.max(this.seqSumMax, s.sL);
      this.seqSumMin = Math.min(this.seqSumMin, s.sL);
      if (s.sL > Math.log(this.tau)) this.seqHigh++;
      if (s.sL < Math.log(1 / this.tau)) this.seqLow++;
      if (v > this.tau) this.high += n;
      if (v < 1 / this.tau) this.low += n;
      const c = Math.min(Math.max(v, 1 / this.tau), this.tau);
      this.sC += n * c;
      this.sC2 += n * c * c;
      this.addSeqW(maskedMeanOf(n * v, n));
    }
    let rowRejectedBySeq = false;
    for (const [i, r] of this.rules.entries()) {
      const keepOf = (x: number) => (r.isK1 ? x >= r.lo && x <= r.up : x <= r.up);
      if (r.token) {
        const sum = r.k === 1 ? -s.sLc : r.k === 2 ? s.sK2c : s.sK3c;
        r.sum += sum;
        const max = r.k === 1 ? -clamp(s.minL) : r.k === 2 ? s.maxK2c : s.maxK3c;
        const min = r.k === 1 ? -clamp(s.maxL) : r.k === 2 ? s.minK2c : s.minK3c;
        r.max = Math.max(r.max, max);
        r.min = Math.min(r.min, min);
        r.fracHigh += get(`r${i}_high`);
        r.fracLow += get(`r${i}_low`);
        r.sC += get(`r${i}_c`);
        r.sC2 += get(`r${i}_c2`);
        const seqValue = maskedMeanOf(sum, n);
        r.seq.add(seqValue);
        if (seqValue > r.up) r.seqHigh++;
        if (seqValue < r.lo) r.seqLow++;
        const rej = get(`r${i}_rej`);
        r.rejectedTokens += rej;
        if (rej > 0) r.rejectedRows++;
      } else {
        const sum = r.k === 1 ? -s.sLc : r.k === 2 ? s.sK2c : s.sK3c;
        const value =
          r.kind === 'seq_sum'
            ? sum
            : r.kind === 'seq_mean'
              ? maskedMeanOf(sum, n)
              : r.k === 2
                ? s.maxK2c
                : s.maxK3c;
        r.sum += n * value;
        r.max = Math.max(r.max, value);
        r.min = Math.min(r.min, value);
        if (value > r.up) {
          r.fracHigh++;
          r.seqHigh++;
        }
        if (r.isK1 && value < r.lo) {
          r.fracLow++;
          r.seqLow++;
        }
        const c = Math.min(Math.max(value, r.isK1 ? r.lo : 0), r.up);
        r.sC += n * c;
        r.sC2 += n * c * c;
        r.seq.add(value);
        if (!keepOf(value)) {
          r.rejectedTokens += n;
          r.rejectedRows++;
          rowRejectedBySeq = true;
        }
      }
    }
    if (this.rules.length > 0) {
      const rej = rowRejectedBySeq ? n : this.rules.some((r) => r.token) ? get('tok_rej') : 0;
      this.rejected += rej;
      if (rej > 0) this.rowsRejected++;
    }
  }

  private addSeqW(v: number): void {
    this.seqW.add(v);
    if (v > this.tau) this.seqWHigh++;
    if (v < 1 / this.tau) this.seqWLow++;
  }

  finish(overall: MismatchAccumulator): Record<string, number> {
    const m: Record<string, number> = {};
    const N = this.N;
    const tau = this.tau;
    if (this.isLevel !== null) {
      if (this.isLevel === 'sequence') {
        m.rollout_is_max = Math.exp(Math.min(this.seqSumMax, CLAMP));
        m.rollout_is_min = Math.exp(this.seqSumMin);
        m.rollout_is_ratio_fraction_high = this.seqHigh / this.rows;
        m.rollout_is_ratio_fraction_low = this.seqLow / this.rows;
      }
      m.rollout_is_mean = maskedMeanOf(this.sW, N);
      if (this.isLevel === 'token') {
        m.rollout_is_ratio_fraction_high = maskedMeanOf(this.high, N);
        m.rollout_is_ratio_fraction_low = maskedMeanOf(this.low, N);
        m.rollout_is_max = this.wMax;
        m.rollout_is_min = this.wMin;
      }
      const meanC = maskedMeanOf(this.sC, N);
      m.rollout_is_std = N > 1 ? Math.sqrt(Math.max(maskedMeanOf(this.sC2, N) - meanC * meanC, 0)) : 0;
      m.rollout_is_eff_sample_size = ((N + MASKED_MEAN_EPS) * (meanC + 1e-8) ** 2) / this.sC2;
      const ss = this.seqW.stats();
      m.rollout_is_seq_mean = ss.mean;
      m.rollout_is_seq_std = ss.std;
      m.rollout_is_seq_max = ss.max;
      m.rollout_is_seq_min = ss.min;
      m.rollout_is_seq_max_deviation = Math.max(Math.abs(ss.max - 1), Math.abs(ss.min - 1));
      m.rollout_is_seq_fraction_high = this.seqWHigh / this.rows;
      m.rollout_is_seq_fraction_low = this.seqWLow / this.rows;
      void tau;
    }
    for (const r of this.rules) {
      const p = `rollout_rs_${r.rule.option}`;
      m[`${p}_mean`] = maskedMeanOf(r.sum, N);
      m[`${p}_max`] = r.max;
      m[`${p}_min`] = r.min;
      if (r.token) {
        m[`${p}_fraction_high`] = maskedMeanOf(r.fracHigh, N);
        m[`${p}_fraction_low`] = r.isK1 ? maskedMeanOf(r.fracLow, N) : 0;
      } else {
        m[`${p}_fraction_high`] = r.fracHigh / this.validRows;
        m[`${p}_fraction_low`] = r.isK1 ? r.fracLow / this.validRows : 0;
      }
      if (N > 1) {
        const mean = maskedMeanOf(r.sC, N);
        m[`${p}_std`] = Math.sqrt(Math.max(maskedMeanOf(r.sC2, N) - mean * mean, 0));
      } else m[`${p}_std`] = 0;
      const st = r.seq.stats();
      m[`${p}_seq_mean`] = st.mean;
      m[`${p}_seq_std`] = st.std;
      m[`${p}_seq_max`] = st.max;
      m[`${p}_seq_min`] = st.min;
      m[`${p}_seq_max_deviation`] = Math.max(Math.abs(st.max), Math.abs(st.min));
      m[`${p}_seq_fraction_high`] = r.seqHigh / this.validRows;
      if (r.isK1) m[`${p}_seq_fraction_low`] = r.seqLow / this.validRows;
      m[`${p}_masked_fraction`] = maskedMeanOf(r.rejectedTokens, N);
      m[`${p}_seq_masked_fraction`] = r.rejectedRows / this.validRows;
    }
    if (this.rules.length > 0) {
      m.rollout_rs_masked_fraction = maskedMeanOf(this.rejected, N);
      m.rollout_rs_seq_masked_fraction = this.rowsRejected / this.rows;
    }
    Object.assign(m, overall.offPolicy());
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(m)) out[`rollout_corr/${k}`] = v;
    out.kept_tokens = N - this.rejected;
    out.rejected_tokens = this.rejected;
    out.rejected_sequences = this.rowsRejected;
    return out;
  }
}

/** The what-if families. A new framework's modes: one entry (its keys) and one Correction class. */
export const WHAT_IF_FAMILIES: readonly Family[] = [
  {
    name: 'verl',
    keys: ['rollout_is', 'rollout_is_threshold', 'rollout_rs', 'rollout_rs_threshold'],
    build: (spec) => new VerlCorrection(spec),
  },
  {
    // TRL's vllm_importance_sampling_modes and OpenRLHF's is_correction_types, `framework:mode` first,
    // then the framework's own parameter names (src/core/extraCorrectionModes.ts)
    name: 'framework',
    keys: ['trl:<mode>', 'openrlhf:<type>'],
    build: (spec) => new FrameworkCorrection(spec),
  },
];
