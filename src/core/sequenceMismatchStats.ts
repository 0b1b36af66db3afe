/**
 * The per-sequence sufficient statistics of a training–inference mismatch audit: everything verl's
 * `compute_offpolicy_metrics` / `compute_rollout_correction_and_rejection_mask` and the frameworks'
 * own mismatch metrics need from one sequence, so a dump of any size is reduced to one small row per
 * sequence (in SQL, src/audit/tokens/tokenAudit.ts) and the rows are folded in float64 (mismatchFold.ts) without
 * ever holding a `[B,T]` batch.
 *
 * Inputs per loss-mask token t of a sequence: `old` (trainer log-prob: NeMo-RL `prev_logprobs`,
 * prime-rl `trainer_logprobs`), `roll` (inference-engine log-prob: NeMo-RL `generation_logprobs`,
 * prime-rl `inference_logprobs`), `ℓ = old − roll` (verl's `log_ratio`), `ℓc = clamp(ℓ, ±20)`
 * (verl's `SAFETY_BOUND`), and `p = exp(roll)` (the rollout probability, for the bins). Tokens
 * outside the loss mask never enter. Each field below is written once as SQL (`SEQUENCE_STAT_SQL`)
 * and once as TypeScript (`sequenceStatsOf`, the reference the tests compare the SQL with); the
 * operations are written in the order the frameworks write them, because in float64 `exp(ℓ) − ℓ − 1`
 * and `exp(ℓ) − 1 − ℓ` differ in the last bits and the audit reproduces both to 1e-9 relative.
 */

/**
 * `clamp(x, lo, hi)` in SQL that stays NULL for NULL x (DuckDB's least/greatest skip NULLs, which
 * would turn a non-loss row's NULL into a bound and count it).
 */
export function clampSql(x: string, lo: string, hi: string): string {
  return `(CASE WHEN ${x} < ${lo} THEN ${lo} WHEN ${x} > ${hi} THEN ${hi} ELSE ${x} END)`;
}

/** Default rollout-probability bins: [0,0.01), [0.01,0.1), [0.1,0.5), [0.5,0.9), [0.9,1]. */
export const DEFAULT_PROB_EDGES: readonly number[] = Object.freeze([0, 0.01, 0.1, 0.5, 0.9, 1]);

/** One sequence's sums over its loss tokens (float64). `n ≥ 1`: sequences without loss tokens are not rows. */
export interface SequenceStats {
  /** loss tokens */
  n: number;
  /** Σ old, Σ roll (verl's per-row masked means of the two log-probs) */
  sOld: number;
  sRoll: number;
  /** Σ ℓ (unclamped) */
  sL: number;
  /** Σ ℓc, min ℓ, max ℓ (unclamped; clamping is monotone, so clamp(min ℓ) = min ℓc) */
  sLc: number;
  minL: number;
  maxL: number;
  /** Σ (exp(ℓ) − ℓ − 1), unclamped: verl `k3_kl`, prime-rl `mismatch_kl`, NeMo-RL `gen_kl_error` (k3) */
  sK3: number;
  /** Σ of its square, its min and max (prime-rl's std/min/max of mismatch_kl) */
  sK3Sq: number;
  minK3: number;
  maxK3: number;
  /** Σ exp(ℓc) and Σ exp(ℓc)² (verl token IS mean, chi2_token) */
  sW: number;
  sW2: number;
  /** Σ |ℓ|, Σ |ℓ|², min |ℓ|, max |ℓ|, Σ exp(|ℓ|) (NeMo-RL token_mult_prob_error) */
  sAbs: number;
  sAbs2: number;
  minAbs: number;
  maxAbs: number;
  sExpAbs: number;
  /** verl rejection statistics on ℓc: k2 = ½ℓc², k3 = exp(ℓc) − 1 − ℓc (sum, min, max) */
  sK2c: number;
  minK2c: number;
  maxK2c: number;
  sK3c: number;
  minK3c: number;
  maxK3c: number;
  /** NeMo-RL policy_kl_error (k3 of gen − prev): Σ (exp(−ℓ) − 1 − (−ℓ)) */
  sPolicyKl: number;
  /** NeMo-RL js_divergence_error summand: Σ ½·k3(prev − M) + ½·k3(gen − M), M = log(½e^prev + ½e^gen) */
  sJs: number;
  /** Per probability bin: tokens and Σ |ℓ| (bins from the audit's edges) */
  binN: number[];
  binAbs: number[];
}

/** Index of the bin of probability p: [e_k, e_{k+1}) except the last, which includes its upper edge. */
export function binOf(p: number, edges: readonly number[]): number {
  const last = edges.length - 2;
  for (let k = 0; k < last; k++) if (p < (edges[k + 1] as number)) return p >= (edges[k] as number) ? k : -1;
  return p >= (edges[last] as number) && p <= (edges[last + 1] as number) ? last : -1;
}

const CLAMP = 20;
const clamp = (x: number) => Math.min(Math.max(x, -CLAMP), CLAMP);

/**
 * The statistics of one sequence from its loss tokens (arrays of equal length, already restricted
 * to the loss mask). The TypeScript reference of `SEQUENCE_STAT_SQL`.
 */
export function sequenceStatsOf(
  old: ArrayLike<number>,
  roll: ArrayLike<number>,
  edges: readonly number[] = DEFAULT_PROB_EDGES,
): SequenceStats {
  const s: SequenceStats = {
    n: 0,
    sOld: 0,
    sRoll: 0,
    sL: 0,
    sLc: 0,
    minL: Number.POSITIVE_INFINITY,
    maxL: Number.NEGATIVE_INFINITY,
    sK3: 0,
    sK3Sq: 0,
    minK3: Number.POSITIVE_INFINITY,
    maxK3: Number.NEGATIVE_INFINITY,
    sW: 0,
    sW2: 0,
    sAbs: 0,
    sAbs2: 0,
    minAbs: Number.POSITIVE_INFINITY,
    maxAbs: Number.NEGATIVE_INFINITY,
    sExpAbs: 0,
    sK2c: 0,
    minK2c: Number.POSITIVE_INFINITY,
    maxK2c: Number.NEGATIVE_INFINITY,
    sK3c: 0,
    minK3c: Number.POSITIVE_INFINITY,
    maxK3c: Number.NEGATIVE_INFINITY,
    sPolicyKl: 0,
    sJs: 0,
    binN: new Array(edges.length - 1).fill(0),
    binAbs: new Array(edges.length - 1).fill(0),
  };
  for (let i = 0; i < old.length; i++) {
    const o = old[i] as number;
    const r = roll[i] as number;
    const l = o - r;
    const lc = clamp(l);
    const k3 = Math.exp(l) - l - 1;
    const w = Math.exp(lc);
    const a = Math.abs(l);
    const k2c = 0.5 * lc * lc;
    const k3c = Math.exp(lc) - 1 - lc;
    const mixExp = 0.5 * Math.exp(o) + 0.5 * Math.exp(r);
    const mix = Math.log(mixExp);
    s.n++;
    s.sOld += o;
    s.sRoll += r;
    s.sL += l;
    s.sLc += lc;
    s.minL = Math.min(s.minL, l);
    s.maxL = Math.max(s.maxL, l);
    s.sK3 += k3;
    s.sK3Sq += k3 * k3;
    s.minK3 = Math.min(s.minK3, k3);
    s.maxK3 = Math.max(s.maxK3, k3);
    s.sW += w;
    s.sW2 += w ** 2;
    s.sAbs += a;
    s.sAbs2 += a * a;
    s.minAbs = Math.min(s.minAbs, a);
    s.maxAbs = Math.max(s.maxAbs, a);
    s.sExpAbs += Math.exp(a);
    s.sK2c += k2c;
    s.minK2c = Math.min(s.minK2c, k2c);
    s.maxK2c = Math.max(s.maxK2c, k2c);
    s.sK3c += k3c;
    s.minK3c = Math.min(s.minK3c, k3c);
    s.maxK3c = Math.max(s.maxK3c, k3c);
    s.sPolicyKl += Math.exp(-l) - 1 - -l;
    s.sJs += 0.5 * (Math.exp(o) / mixExp - (o - mix) - 1) + 0.5 * (Math.exp(r) / mixExp - (r - mix) - 1);
    const bin = binOf(Math.exp(r), edges);
    if (bin >= 0) {
      (s.binN[bin] as number)++;
      s.binAbs[bin] = (s.binAbs[bin] as number) + a;
    }
  }
  return s;
}

/**
 * The per-token values every aggregate below reads, computed once per token (a projection over a
 * relation with DOUBLE columns `old`, `roll`; DuckDB does not share repeated subexpressions):
 * `l`, `lc`, `el = exp(l)`, `elc = exp(lc)`, `a = |l|`, `p = exp(roll)`, `eo = exp(old)`, `m_exp`, `mix`.
 */
export const TOKEN_FEATURE_SQL: readonly (readonly string[])[] = Object.freeze([
  // stage 1, from the two log-probs
  [
    'old - roll AS l',
    `${clampSql('(old - roll)', `-${CLAMP}.0`, `${CLAMP}.0`)} AS lc`,
    'abs(old - roll) AS a',
    'exp(roll) AS p',
    'exp(old) AS eo',
  ],
  // stage 2, from stage 1 (each exponential once per token). NeMo-RL's JS divergence needs
  // M = ½e^old + ½e^roll; exp(old − ln M) is taken as e^old / M, equal up to rounding.
  ['exp(l) AS el', 'exp(lc) AS elc', '0.5 * eo + 0.5 * p AS m_exp'],
  ['ln(m_exp) AS mix'],
]);

/** The feature relation over `source` (columns `old`, `roll`, ...): the stages nested as subqueries. */
export function featureSql(source: string): string {
  return TOKEN_FEATURE_SQL.reduce((inner, stage) => `SELECT *, ${stage.join(', ')} FROM (${inner})`, source);
}

/**
 * The same statistics as SQL aggregates over the feature relation (TOKEN_FEATURE_SQL plus `old`,
 * `roll`), grouped by sequence. Rows that are not loss tokens have NULL `old`/`roll`, so every
 * feature is NULL there and no aggregate counts them (`count(l)`, FILTERs on NULL are false). Column aliases are the field names in snake
 * case; the bins are `bin{k}_n`, `bin{k}_abs`. Each expression keeps the operation order of the
 * TypeScript reference above.
 */
export function sequenceStatSql(edges: readonly number[]): string[] {
  const k3 = '(el - l - 1)';
  const k2c = '(0.5 * lc * lc)';
  const k3c = '(elc - 1 - lc)';
  const cols = [
    'count(l)::DOUBLE AS n',
    'sum(old) AS s_old',
    'sum(roll) AS s_roll',
    'sum(l) AS s_l',
    'sum(lc) AS s_lc',
    'min(l) AS min_l',
    'max(l) AS max_l',
    `sum(${k3}) AS s_k3`,
    `sum(${k3} * ${k3}) AS s_k3_sq`,
    `min(${k3}) AS min_k3`,
    `max(${k3}) AS max_k3`,
    'sum(elc) AS s_w',
    'sum(pow(elc, 2)) AS s_w2',
    'sum(a) AS s_abs',
    'sum(a * a) AS s_abs2',
    'min(a) AS min_abs',
    'max(a) AS max_abs',
    'sum(exp(a)) AS s_exp_abs',
    `sum(${k2c}) AS s_k2c`,
    `min(${k2c}) AS min_k2c`,
    `max(${k2c}) AS max_k2c`,
    `sum(${k3c}) AS s_k3c`,
    `min(${k3c}) AS min_k3c`,
    `max(${k3c}) AS max_k3c`,
    'sum(exp(-l) - 1 - (-l)) AS s_policy_kl',
    'sum(0.5 * (eo / m_exp - (old - mix) - 1) + 0.5 * (p / m_exp - (roll - mix) - 1)) AS s_js',
  ];
  const last = edges.length - 2;
  for (let k = 0; k <= last; k++) {
    const lo = edges[k] as number;
    const hi = edges[k + 1] as number;
    const cond = `p >= ${lo} AND p ${k === last ? '<=' : '<'} ${hi}`;
    cols.push(`count(*) FILTER (WHERE ${cond})::DOUBLE AS bin${k}_n`);
    cols.push(`coalesce(sum(a) FILTER (WHERE ${cond}), 0) AS bin${k}_abs`);
  }
  return cols;
}

/** A row of `sequenceStatSql` (numbers by alias) as SequenceStats. */
export function sequenceStatsFromRow(row: Record<string, unknown>, bins: number): SequenceStats {
  const v = (k: string) => Number(row[k]);
  return {
    n: v('n'),
    sOld: v('s_old'),
    sRoll: v('s_roll'),
    sL: v('s_l'),
    sLc: v('s_lc'),
    minL: v('min_l'),
    maxL: v('max_l'),
    sK3: v('s_k3'),
    sK3Sq: v('s_k3_sq'),
    minK3: v('min_k3'),
    maxK3: v('max_k3'),
    sW: v('s_w'),
    sW2: v('s_w2'),
    sAbs: v('s_abs'),
    sAbs2: v('s_abs2'),
    minAbs: v('min_abs'),
    maxAbs: v('max_abs'),
    sExpAbs: v('s_exp_abs'),
    sK2c: v('s_k2c'),
    minK2c: v('min_k2c'),
    maxK2c: v('max_k2c'),
    sK3c: v('s_k3c'),
    minK3c: v('min_k3c'),
    maxK3c: v('max_k3c'),
    sPolicyKl: v('s_policy_kl'),
    sJs: v('s_js'),
    binN: Array.from({ length: bins }, (_, k) => v(`bin${k}_n`)),
    binAbs: Array.from({ length: bins }, (_, k) => v(`bin${k}_abs`)),
  };
}
