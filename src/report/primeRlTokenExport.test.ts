import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { packSequences } from '../policy/sequenceModel.js';
import {
  PRIME_RL_TOKEN_EXPORT_KEYS,
  primeRlTokenExportLine,
  primeRlTokenExportLines,
  pythonFloatRepr,
  type TokenExportSequence,
  tokenExportSequences,
  writePrimeRlTokenExportStep,
} from './primeRlTokenExport.js';

/** Two rank files of the shared mismatch sample, copied (test/golden/prime-rl-token-export/README.md). */
const SAMPLE = fileURLToPath(new URL('../../test/golden/prime-rl-token-export', import.meta.url));

/** `key -> raw JSON text of its value` of one compact line (values are scalars or flat arrays). */
function rawFields(line: string): [string, string][] {
  return Array.from(line.matchAll(/"(\w+)":(\[[^\]]*\]|"[^"]*"|[^,}]*)/g), (m) => [
    m[1] as string,
    m[2] as string,
  ]);
}

/** The JSON type of a raw value as Python's json would load it: int, float, bool, null, str. */
function rawType(text: string): string {
  if (text === 'null') return 'null';
  if (text === 'true' || text === 'false') return 'bool';
  if (text.startsWith('"')) return 'str';
  if (/^-?\d+$/.test(text)) return 'int';
  return 'float';
}

/** Per key: the type of a scalar, or the set of element types of an array, as a signature. */
function signature(line: string): [string, string][] {
  return rawFields(line).map(([k, v]) => {
    if (!v.startsWith('[')) return [k, rawType(v)];
    const types = new Set(v.slice(1, -1).split(',').filter(Boolean).map(rawType));
    return [k, `[${[...types].sort().join('|')}]`];
  });
}

/** The inputs of a sample line, as the writer takes them. */
function inputsOf(d: Record<string, unknown>): TokenExportSequence {
  return {
    tokenIds: d.token_ids as number[],
    positionIds: d.position_ids as number[],
    lossMask: d.loss_mask as boolean[],
    advantages: d.advantages as number[],
    inferenceLogprobs: d.inference_logprobs as number[],
    trainerLogprobs: d.trainer_logprobs as number[],
    entropy: d.entropy as number[],
    envName: d.env_name as string,
  };
}

/** The micro batches of a sample rank file, rebuilt from the lines' micro_step / micro_sequence_idx. */
function microBatchesOf(lines: string[]): TokenExportSequence[][] {
  const batches: TokenExportSequence[][] = [];
  for (const line of lines) {
    const d = JSON.parse(line) as Record<string, unknown>;
    const m = d.micro_step as number;
    batches[m] ??= [];
    (batches[m] as TokenExportSequence[])[d.micro_sequence_idx as number] = inputsOf(d);
  }
  return batches;
}

describe("prime-rl token export: against the sample in prime-rl's layout", () => {
  const files = ['step_1/rank_0.jsonl', 'step_2/rank_1.jsonl'];

  it.each(files)('%s: same keys, in the same order, with the same JSON types', (file) => {
    const sample = readFileSync(join(SAMPLE, file), 'utf8').trimEnd().split('\n');
    const first = JSON.parse(sample[0] as string) as { step: number; rank: number };
    const ours = primeRlTokenExportLines(first.step, microBatchesOf(sample), { rank: first.rank });
    expect(ours.length).toBe(sample.length);
    ours.forEach((line, i) => {
      expect(Object.keys(JSON.parse(line))).toEqual([...PRIME_RL_TOKEN_EXPORT_KEYS]);
      expect(Object.keys(JSON.parse(line))).toEqual(Object.keys(JSON.parse(sample[i] as string)));
      expect(signature(line)).toEqual(signature(sample[i] as string));
    });
  });

  // Measured: 74 of the 10051 comma-separated values of step_1/rank_0 and 66 of the 8868 of
  // step_2/rank_1 differ in text, all in the four computed columns (float32 exp rounding).
  it.each(files)('%s: the input columns byte for byte, the computed ones within a float32 ulp', (file) => {
    const sample = readFileSync(join(SAMPLE, file), 'utf8').trimEnd().split('\n');
    const first = JSON.parse(sample[0] as string) as { step: number; rank: number };
    const ours = primeRlTokenExportLines(first.step, microBatchesOf(sample), { rank: first.rank });
    const computed = new Set(['mismatch_kl', 'log_importance_ratio', 'importance_ratio', 'prob_delta']);
    ours.forEach((line, i) => {
      const a = new Map(rawFields(line));
      const b = new Map(rawFields(sample[i] as string));
      for (const [key, text] of b) {
        if (!computed.has(key)) {
          expect(a.get(key), `${file} line ${i} ${key}`).toBe(text);
          continue;
        }
        const x = JSON.parse(a.get(key) as string) as number[];
        const y = JSON.parse(text) as number[];
        x.forEach((v, t) => {
          const w = y[t] as number;
          // one float32 ulp of the larger operand of the subtraction bounds torch's exp differences
          expect(Math.abs(v - w), `${file} line ${i} ${key}[${t}]`).toBeLessThanOrEqual(
            Math.max(Math.abs(w), 1) * 2 ** -22,
          );
        });
      }
    });
  });
});

describe('primeRlTokenExportLine', () => {
  const seq: TokenExportSequence = {
    tokenIds: [5, 6, 7],
    lossMask: [0, 1, 1],
    advantages: [0, 0.5, 0.5],
    inferenceLogprobs: [0, -0.1, -2],
    trainerLogprobs: [-3, -0.1, -1.5],
    entropy: [1, 0.25, 0.75],
    envName: 'arith',
  };
  const header = { step: 3, rank: 0, microStep: 0, microSequenceIdx: 0, exportSequenceIdx: 0 };

  it('computes the ratio columns and the DPPO masks as prime-rl does', () => {
    const d = JSON.parse(primeRlTokenExportLine(header, seq));
    expect(d.log_importance_ratio[2]).toBeCloseTo(0.5, 6);
    expect(d.importance_ratio[2]).toBeCloseTo(Math.exp(0.5), 6);
    expect(d.mismatch_kl[2]).toBeCloseTo(Math.exp(0.5) - 0.5 - 1, 6);
    // prob_delta = e^-1.5 − e^-2 = 0.0878 < 0.2: not masked; token 0 is outside the loss mask
    expect(d.prob_delta[2]).toBeCloseTo(Math.exp(-1.5) - Math.exp(-2), 6);
    expect(d.is_masked).toEqual([false, false, false]);
    expect(d.position_ids).toEqual([0, 1, 2]);
    expect(d.rl_weights).toEqual([null, null, null]);
    const big = { ...seq, inferenceLogprobs: [0, -0.1, -5], trainerLogprobs: [-3, -0.1, -0.5] };
    const m = JSON.parse(primeRlTokenExportLine(header, big));
    expect(m.is_masked).toEqual([false, false, true]);
    expect(m.is_masked_high).toEqual([false, false, true]);
    expect(m.is_masked_low).toEqual([false, false, false]);
    const neg = {
      ...big,
      advantages: [0, -1, -1],
      inferenceLogprobs: [0, -0.1, -0.5],
      trainerLogprobs: [-3, -0.1, -5],
    };
    const l = JSON.parse(primeRlTokenExportLine(header, neg));
    expect(l.is_masked_low).toEqual([false, false, true]);
    expect(JSON.parse(primeRlTokenExportLine(header, big, { dppoMask: null })).is_masked).toEqual([
      null,
      null,
      null,
    ]);
  });

  it('writes floats as Python does and non-finite computed values as null', () => {
    const line = primeRlTokenExportLine(header, { ...seq, trainerLogprobs: [-3, 100, -1.5] });
    expect(line).toContain('"advantages":[0.0,0.5,0.5]');
    expect(line).toContain('"entropy":[1.0,0.25,0.75]');
    expect(JSON.parse(line).importance_ratio[1]).toBeNull(); // exp(100.1) overflows float32
    expect(line.startsWith('{"schema_version":1,"step":3,"rank":0,"micro_step":0,')).toBe(true);
    expect(line).not.toMatch(/\s/);
  });

  it('refuses misaligned arrays, bad ids, bad masks and non-finite inputs, naming field and token', () => {
    expect(() => primeRlTokenExportLine(header, { ...seq, entropy: [1, 2] })).toThrow(
      expect.objectContaining({ code: 'SHAPE_MISMATCH', message: expect.stringMatching(/^entropy:/) }),
    );
    expect(() => primeRlTokenExportLine(header, { ...seq, tokenIds: [1, -2, 3] })).toThrow(
      /token_ids: .*token 1/,
    );
    expect(() => primeRlTokenExportLine(header, { ...seq, lossMask: [0, 2, 1] })).toThrow(
      expect.objectContaining({ code: 'BAD_MASK' }),
    );
    expect(() => primeRlTokenExportLine(header, { ...seq, trainerLogprobs: [0, Number.NaN, 0] })).toThrow(
      /trainer_logprobs: step 3, micro step 0, sequence 0, token 1 is NaN/,
    );
  });

  it('escapes non-ASCII environment names as json.dumps does', () => {
    expect(primeRlTokenExportLine(header, { ...seq, envName: 'é✓' })).toContain(
      '"env_name":"\\u00e9\\u2713"',
    );
    expect(primeRlTokenExportLine(header, { ...seq, envName: null })).toContain('"env_name":null');
  });
});

describe('pythonFloatRepr', () => {
  it.each([
    [0, '0.0'],
    [-0, '-0.0'],
    [1, '1.0'],
    [-2.5, '-2.5'],
    [1e-5, '1e-05'],
    [1.5e-5, '1.5e-05'],
    [0.0001, '0.0001'],
    [6.581720754184062e-6, '6.581720754184062e-06'],
    [1e16, '1e+16'],
    [123456789012345.6, '123456789012345.6'],
    [3.4028234663852886e38, '3.4028234663852886e+38'],
  ])('%s -> %s', (x, want) => {
    expect(pythonFloatRepr(x)).toBe(want);
  });
});

describe('primeRlTokenExportLines and the writer', () => {
  const mk = (loss: number[]): TokenExportSequence => ({
    tokenIds: loss.map((_, t) => t + 1),
    lossMask: loss,
    advantages: loss.map((m) => m * 0.5),
    inferenceLogprobs: loss.map((m) => -0.5 * m),
    trainerLogprobs: loss.map(() => -0.5),
    entropy: loss.map(() => 1),
    envName: 'arith',
  });
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('skips sequences without a loss token; micro_sequence_idx counts them, export_sequence_idx does not', () => {
    const lines = primeRlTokenExportLines(4, [[mk([0, 1]), mk([0, 0]), mk([0, 1])], [mk([1, 1])]]);
    const heads = lines
      .map((l) => JSON.parse(l))
      .map((d) => [d.micro_step, d.micro_sequence_idx, d.export_sequence_idx]);
    expect(heads).toEqual([
      [0, 0, 0],
      [0, 2, 1],
      [1, 0, 2],
    ]);
  });

  it('writes rank_0.jsonl and STABLE, and never overwrites an existing file', () => {
    dir = mkdtempSync(join(tmpdir(), 'prime-export-'));
    const res = writePrimeRlTokenExportStep(dir, 1, [[mk([0, 1]), mk([1, 1])]]);
    expect(res.lines).toBe(2);
    expect(res.file).toBe(join(dir, 'token_exports', 'step_1', 'rank_0.jsonl'));
    const text = readFileSync(res.file, 'utf8');
    expect(text.split('\n')).toHaveLength(3); // two lines, each ending in a newline
    expect(readFileSync(join(dir, 'token_exports', 'step_1', 'STABLE'), 'utf8')).toBe('');
    expect(() => writePrimeRlTokenExportStep(dir, 1, [[mk([1])]])).toThrow(
      expect.objectContaining({
        code: 'IO_ERROR',
        message: expect.stringMatching(/already exists: refusing to overwrite/),
      }),
    );
    expect(readFileSync(res.file, 'utf8')).toBe(text);
    // a user's file where step 2's rank file would go is kept as it was
    const step2 = join(dir, 'token_exports', 'step_2');
    writePrimeRlTokenExportStep(dir, 0, [[mk([1])]], { stable: false });
    expect(existsSync(join(dir, 'token_exports', 'step_0', 'STABLE'))).toBe(false);
    rmSync(step2, { recursive: true, force: true });
    mkdirSync(step2, { recursive: true });
    writeFileSync(join(step2, 'rank_0.jsonl'), 'mine\n');
    expect(() => writePrimeRlTokenExportStep(dir, 2, [[mk([1])]])).toThrow(/already exists/);
    expect(readFileSync(join(step2, 'rank_0.jsonl'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(step2, 'STABLE'))).toBe(false);
    // no temporary files are left behind
    for (const s of ['step_0', 'step_1', 'step_2']) {
      expect(readdirSync(join(dir, 'token_exports', s)).filter((f) => f.includes('.tmp-'))).toEqual([]);
    }
  });

  it('checks all input before writing anything', () => {
    dir = mkdtempSync(join(tmpdir(), 'prime-export-'));
    expect(() => writePrimeRlTokenExportStep(dir, 1, [[mk([1]), { ...mk([1]), entropy: [] }]])).toThrow(
      expect.objectContaining({ code: 'SHAPE_MISMATCH' }),
    );
    expect(existsSync(join(dir, 'token_exports'))).toBe(false);
    expect(() => writePrimeRlTokenExportStep(dir, -1, [])).toThrow(/^step: expected an integer >= 0/);
  });
});

describe('tokenExportSequences', () => {
  // rows: prompt [7, 8] + response [1, 2, 3] (token 2 is environment output); prompt [9] + response [4]
  const batch = packSequences([[7, 8], [9]], [[1, 2, 3], [4]]);
  const columns = {
    trainerLogProbs: [-0.1, -0.2, -0.3, -0.4, 0, 0],
    inferenceLogProbs: [-0.11, 99, -0.33, -0.44, 0, 0],
    responseMask: [1, 0, 1, 1, 0, 0],
    advantages: [0.5, -1],
    entropy: [1, 2, 3, 4, 0, 0],
  };

  it('aligns response columns with token positions, prompt included, as prime-rl does', () => {
    const [a, b] = tokenExportSequences(batch, columns, 'arith');
    expect(batch.responseCols).toBe(3);
    expect(a?.tokenIds).toEqual([7, 8, 1, 2, 3]);
    expect(a?.lossMask).toEqual([false, false, true, false, true]);
    expect(a?.trainerLogprobs).toEqual([0, 0, -0.1, -0.2, -0.3]);
    expect(a?.inferenceLogprobs).toEqual([0, 0, -0.11, 0, -0.33]);
    expect(a?.advantages).toEqual([0, 0, 0.5, 0, 0.5]);
    expect(a?.entropy).toEqual([0, 0, 1, 2, 3]);
    expect(b?.tokenIds).toEqual([9, 4]);
    expect(b?.lossMask).toEqual([false, true]);
    expect(b?.inferenceLogprobs).toEqual([0, -0.44]);
    expect(b?.advantages).toEqual([0, -1]);
    const line = JSON.parse(
      primeRlTokenExportLines(1, [tokenExportSequences(batch, columns, 'arith')])[0] as string,
    );
    expect(line.env_name).toBe('arith');
    expect(line.log_importance_ratio[2]).toBeCloseTo(0.01, 6);
  });

  it('names a column of the wrong length', () => {
    expect(() => tokenExportSequences(batch, { ...columns, entropy: [1] })).toThrow(
      /^entropy: expected 6 values \[2, 3\]/,
    );
    expect(() => tokenExportSequences(batch, { ...columns, advantages: [1, 2, 3] })).toThrow(/^advantages:/);
  });
});
