/**
 * The token-level audit against test/golden/mismatch-sample/expected.json: the values verl's own
 * functions (commit b178a3cd, `compute_offpolicy_metrics`, `compute_rollout_correction_and_rejection_mask`)
 * and numpy give on the same sequences, in float64, to 1e-9 relative, overall (all steps as one
 * batch), per step and per task, for both layouts (NeMo-RL and prime-rl), including four what-ifs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue, RunRecord } from '../../experiments/types.js';
import { runTokenAudit } from './tokenAudit.js';

const golden = fileURLToPath(new URL('../../../test/golden/mismatch-sample/', import.meta.url));
const expected = JSON.parse(readFileSync(`${golden}expected.json`, 'utf8'));

const GOLDEN_WHAT_IFS = [
  ['is_token', 'rollout_is=token,rollout_is_threshold=2.0'],
  ['is_sequence', 'rollout_is=sequence,rollout_is_threshold=2.0'],
  ['rs_token_k1', 'rollout_rs=token_k1,rollout_rs_threshold=0.5_2.0'],
  ['rs_seq_mean_k3', 'rollout_rs=seq_mean_k3,rollout_rs_threshold=0.002'],
] as const;

/** |a − b| <= 1e-9 · max(|a|, |b|) (exact for zeros); the message names the key. */
function close(actual: JsonValue | undefined, want: number, key: string, rel = 1e-9, abs = 0): void {
  expect(typeof actual, key).toBe('number');
  const a = actual as number;
  const tol = Math.max(rel * Math.max(Math.abs(a), Math.abs(want)), abs);
  if (!(Math.abs(a - want) <= tol)) {
    throw new Error(
      `${key}: got ${a}, expected ${want} (relative error ${Math.abs(a - want) / Math.abs(want)})`,
    );
  }
}

/** The numpy block's names → the record's. */
function checkNumpy(m: Record<string, JsonValue>, np: Record<string, unknown>, where: string): void {
  close(m.loss_tokens, np.n_tokens as number, `${where} n_tokens`);
  close(m.sequences, np.n_sequences as number, `${where} n_sequences`);
  close(m.mean_abs_delta, np.mean_abs_delta as number, `${where} mean_abs_delta`);
  close(m.max_abs_delta, np.max_abs_delta as number, `${where} max_abs_delta`);
  close(m.mean_delta, np.mean_delta as number, `${where} mean_delta`);
  close(m.p99_abs_delta, np.p99_abs_delta_linear as number, `${where} p99 linear`);
  close(m.p99_abs_delta_nearest_rank, np.p99_abs_delta_nearest_rank as number, `${where} p99 nearest rank`);
  close(
    m['nemo_rl/token_mult_prob_error'],
    np.nemo_rl_token_mult_prob_error as number,
    `${where} token_mult_prob_error`,
  );
  for (const s of ['max', 'mean', 'min'])
    close(
      m[`nemo_rl/${s}_seq_mult_prob_error`],
      np[`nemo_rl_seq_mult_prob_error_${s}`] as number,
      `${where} seq ${s}`,
    );
  const kl = np.prime_rl_mismatch_kl as Record<string, number>;
  close(m['prime_rl/mismatch_kl/all/mean'], kl.mean as number, `${where} mismatch_kl mean`);
  // One token's exp(Δ) − Δ − 1 with |Δ| ≈ 6e-4: the golden file took exp from torch, which is one
  // ulp of 1.0 (2.2e-16) away from the correctly rounded exp that DuckDB, numpy and Python's math
  // give (numpy reproduces our 1.6363946953035224e-7 for step 1); the cancellation turns that ulp
  // into 1.4e-9 relative (and into 7e-5 relative for the step-2 min, 3.3e-12). Allow 2 ulps of 1.0
  // absolute for these two single-token order statistics, nowhere else.
  close(
    m['prime_rl/mismatch_kl/all/median'],
    kl.median_lower as number,
    `${where} mismatch_kl median`,
    1e-9,
    4.5e-16,
  );
  close(m['prime_rl/mismatch_kl/all/std'], kl.std_unbiased as number, `${where} mismatch_kl std`);
  close(m['prime_rl/mismatch_kl/all/min'], kl.min as number, `${where} mismatch_kl min`, 1e-9, 4.5e-16);
  close(m['prime_rl/mismatch_kl/all/max'], kl.max as number, `${where} mismatch_kl max`);
}

function checkCorrections(
  rows: Record<string, JsonValue>[],
  // biome-ignore lint/suspicious/noExplicitAny: the golden file's JSON
  block: Record<string, any>,
  where: string,
): void {
  for (const [name, spec] of GOLDEN_WHAT_IFS) {
    const row = rows.find((r) => r.what_if === spec);
    expect(row, `${where} ${spec}`).toBeDefined();
    const want = block[name];
    for (const [k, v] of Object.entries(want.metrics as Record<string, number>))
      close(row?.[k], v, `${where} ${name} ${k}`);
    for (const k of ['kept_tokens', 'rejected_tokens', 'rejected_sequences']) {
      if (k in want) expect(row?.[k], `${where} ${name} ${k}`).toBe(want[k]);
    }
  }
}

function checkRecord(record: RunRecord): void {
  const f64 = expected.overall.float64;
  for (const [k, v] of Object.entries(f64.offpolicy as Record<string, number>))
    close(record.metrics[`rollout_corr/${k}`], v, `overall ${k}`);
  checkNumpy(record.metrics, f64.numpy, 'overall');
  checkCorrections(record.tables.corrections as Record<string, JsonValue>[], f64, 'overall');
  for (const step of ['1', '2']) {
    const want = expected.steps[step].float64;
    const row = record.tables.mismatch_by_step?.find((r) => r.step === Number(step)) as Record<
      string,
      JsonValue
    >;
    for (const [k, v] of Object.entries(want.offpolicy as Record<string, number>))
      close(row[`rollout_corr/${k}`], v, `step ${step} ${k}`);
    checkNumpy(row, want.numpy, `step ${step}`);
    checkCorrections(
      (record.tables.corrections_by_step ?? []).filter((r) => r.step === Number(step)),
      want,
      `step ${step}`,
    );
  }
  const bins = record.tables.mismatch_by_probability ?? [];
  const wantBins = f64.numpy.abs_delta_by_rollout_prob as {
    lo: number;
    hi: number;
    count: number;
    mean_abs_delta: number | null;
  }[];
  expect(bins.length).toBe(wantBins.length);
  for (const [i, b] of wantBins.entries()) {
    expect(bins[i]?.lo).toBe(b.lo);
    expect(bins[i]?.hi).toBe(b.hi);
    expect(bins[i]?.tokens).toBe(b.count);
    if (b.mean_abs_delta === null) expect(bins[i]?.mean_abs_delta).toBeNull();
    else close(bins[i]?.mean_abs_delta, b.mean_abs_delta, `bin ${b.lo}`);
  }
  for (const [task, want] of Object.entries(expected.overall.offpolicy_by_env as Record<string, Golden>)) {
    const row = record.tables.mismatch_by_task?.find((r) => r.task === task) as Record<string, JsonValue>;
    expect(row, task).toBeDefined();
    for (const [k, v] of Object.entries(want.float64 as Record<string, number>))
      close(row[`rollout_corr/${k}`], v, `task ${task} ${k}`);
  }
  for (const [task, want] of Object.entries(expected.overall.float64.numpy.by_env ?? {}) as [
    string,
    Golden,
  ][]) {
    const row = record.tables.mismatch_by_task?.find((r) => r.task === task) as Record<string, JsonValue>;
    close(row.mean_abs_delta, want.mean_abs_delta, `task ${task} mean_abs_delta`);
    close(
      row['nemo_rl/token_mult_prob_error'],
      want.nemo_rl_token_mult_prob_error,
      `task ${task} token_mult_prob_error`,
    );
    close(row['prime_rl/mismatch_kl/all/mean'], want.prime_rl_mismatch_kl.mean, `task ${task} mismatch_kl`);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the golden file's JSON
type Golden = any;

const whatIf = GOLDEN_WHAT_IFS.map(([, s]) => s);
let nemo: RunRecord;
let prime: RunRecord;

beforeAll(async () => {
  nemo = await runTokenAudit(`${golden}nemo-rl`, { preset: 'nemo-rl', whatIf });
  prime = await runTokenAudit(`${golden}prime-rl`, { preset: 'prime-rl', whatIf });
}, 60_000);

describe('token-level audit on the golden mismatch sample', () => {
  it('NeMo-RL layout reproduces verl and numpy values to 1e-9 relative', () => {
    checkRecord(nemo);
  });
  it('prime-rl layout reproduces them too', () => {
    checkRecord(prime);
  });
  it('both layouts give identical numbers (same sequences, same float32 values)', () => {
    const strip = (r: RunRecord) => ({ metrics: r.metrics as Record<string, JsonValue>, tables: r.tables });
    const a = strip(nemo);
    const b = strip(prime);
    for (const [k, v] of Object.entries(a.metrics)) {
      if (k === 'files' || k === 'lines_read') continue;
      if (typeof v === 'number') close(b.metrics[k], v, `metrics ${k}`, 1e-12);
      else expect(b.metrics[k], k).toEqual(v);
    }
    expect(b.tables.corrections?.length).toBe(a.tables.corrections?.length);
    for (const [i, row] of (a.tables.corrections ?? []).entries())
      for (const [k, v] of Object.entries(row))
        if (typeof v === 'number') close(b.tables.corrections?.[i]?.[k], v, `corrections ${i} ${k}`, 1e-12);
    expect(b.tables.mismatch_by_probability).toEqual(a.tables.mismatch_by_probability);
  });
  it('finds the extreme token, the multi-turn rounds and the sequence-IS note', () => {
    // ground truth: one extreme token |Δ| = 5.9 in step 1
    const s1 = nemo.tables.mismatch_by_step?.find((r) => r.step === 1);
    close(s1?.max_abs_delta, expected.ground_truth['1'].extreme_tokens[0].delta, 'extreme');
    // multi-turn sequences have loss tokens in more than one round
    const rounds = nemo.tables.mismatch_by_round ?? [];
    expect(rounds.length).toBeGreaterThan(1);
    expect(rounds[0]?.sequences).toBe(16);
    expect(nemo.notes?.some((n) => n.startsWith('sequence-level IS: longest sequence × mean token KL'))).toBe(
      true,
    );
  });
});
