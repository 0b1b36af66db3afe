/**
 * prime-rl's per-env token means (primeEnvMeans.ts, primeEnvExport.ts): hand-computed values on two
 * small envs, the mismatch mask narrowed by `rl_weights`, null tokens counted; and on the committed
 * prime-rl token export (test/golden/mismatch-sample) with a metrics log planting one `/all` value
 * computed as a mean of per-env means: exactly that row carries the signature.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../experiments/types.js';
import { addPrimeEnvLogAudit, parseExportLine, readPrimeEnvMeans } from './primeEnvExport.js';
import { compareEnvMeans, ENV_MEAN_SIGNATURE, EnvMeanAccumulator } from './primeEnvMeans.js';

const EXPORT = 'test/golden/mismatch-sample/prime-rl/token_exports';

function seq(env: string, mask: boolean[], entropy: (number | null)[], rl: (number | null)[] | null = null) {
  return { step: 3, env, lossMask: mask, entropy, mismatchKl: entropy, rlWeights: rl, refKlWeights: null };
}

describe('per-env token means', () => {
  it('token mean, mean of env means and mean of sequence means, by hand', () => {
    const acc = new EnvMeanAccumulator();
    // env a: one sequence, masked tokens 1, 3 (the unmasked 100 is not counted)
    acc.add(seq('a', [true, false, true], [1, 100, 3]));
    // env b: two sequences: [5] and [7, 9, 11]
    acc.add(seq('b', [true], [5]));
    acc.add(seq('b', [true, true, true, false], [7, 9, 11, 100]));
    const rows = acc.rows().filter((r) => r.metric === 'entropy');
    expect(rows.map((r) => r.scope)).toEqual(['all', 'a', 'b']);
    const [all, a, b] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    expect(a.tokenMean).toBe(2);
    expect(b.tokenMean).toBe(8); // (5 + 7 + 9 + 11) / 4
    expect(all.tokenMean).toBe(36 / 6);
    expect(all.meanOfEnvMeans).toBe(5); // (2 + 8) / 2
    expect(all.meanOfSequenceMeans).toBe((2 + 5 + 9) / 3);
    expect(all.tokens).toBe(6);
  });

  it('narrows the mismatch mask by rl_weights and skips null tokens, counting them', () => {
    const acc = new EnvMeanAccumulator();
    acc.add(seq('a', [true, true, true], [2, 4, null], [1, 0, 1]));
    const rows = acc.rows();
    expect(rows.find((r) => r.metric === 'mismatch_kl' && r.scope === 'a')?.tokenMean).toBe(2);
    expect(rows.find((r) => r.metric === 'entropy' && r.scope === 'a')?.tokenMean).toBe(3);
    expect(acc.nullTokens).toEqual({ entropy: 1, mismatch_kl: 1 });
  });

  it('names the signature only when the logged /all is a mean of means', () => {
    const acc = new EnvMeanAccumulator();
    acc.add(seq('a', [true, true], [1, 3]));
    acc.add(seq('b', [true, true, true, true], [8, 8, 8, 8]));
    const rows = acc.rows().filter((r) => r.metric === 'entropy');
    const log = (all: number) => ({
      files: [],
      formats: [],
      notes: [],
      rows: [
        { step: 3, metric: 'entropy/all/mean', value: all },
        { step: 3, metric: 'entropy/a/mean', value: 2 },
        { step: 3, metric: 'entropy/b/mean', value: 8 },
      ],
    });
    const good = compareEnvMeans(rows, log(36 / 6));
    expect(good.map((r) => [r.metric, r.agrees, r.signature])).toEqual([
      ['entropy/all/mean', true, null],
      ['entropy/a/mean', true, null],
      ['entropy/b/mean', true, null],
    ]);
    const bad = compareEnvMeans(rows, log(5)); // (2 + 8) / 2
    expect(bad[0]?.agrees).toBe(false);
    expect(bad[0]?.signature).toBe(ENV_MEAN_SIGNATURE);
    // a value that is wrong some other way disagrees without the signature
    expect(compareEnvMeans(rows, log(7))[0]?.signature).toBeNull();
  });

  it('an export line with misaligned per-token arrays names file and line', () => {
    const line = JSON.stringify({ step: 1, env_name: 'x', loss_mask: [true, true], entropy: [1] });
    expect(() => parseExportLine(line, 'rank_0.jsonl', 7, 1)).toThrow(
      /rank_0\.jsonl:7: entropy: expected 2 numbers/,
    );
  });
});

describe('prime-rl token export vs a metrics log with a planted /all bug', () => {
  it('flags exactly the planted row on the committed export', async () => {
    const rows = (await readPrimeEnvMeans(EXPORT, false)).rows();
    // computed independently (Python over the same files): step 1 entropy, all envs
    const all1 = rows.find((r) => r.step === 1 && r.metric === 'entropy' && r.scope === 'all');
    expect(all1?.tokens).toBe(597);
    expect(all1?.tokenMean).toBeCloseTo(0.7224692986869383, 12);
    expect(all1?.meanOfEnvMeans).toBeCloseTo(0.7302173784242884, 12);
    expect(all1?.meanOfSequenceMeans).toBeCloseTo(0.7561585773950987, 12);
    const logRows: Record<string, number>[] = [];
    for (const step of [1, 2]) {
      const row: Record<string, number> = { step, time: 0, 'loss/mean': 0.1 };
      for (const r of rows.filter((x) => x.step === step)) {
        row[`${r.metric}/${r.scope}/mean`] = r.tokenMean as number;
      }
      logRows.push(row);
    }
    const all2 = rows.find((r) => r.step === 2 && r.metric === 'entropy' && r.scope === 'all');
    (logRows[1] as Record<string, number>)['entropy/all/mean'] = all2?.meanOfEnvMeans as number;
    const dir = await mkdtemp(join(tmpdir(), 'labs-prime-env-'));
    const logFile = join(dir, 'metrics.jsonl');
    await writeFile(logFile, `${logRows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const record = { metrics: {}, tables: {}, config: {}, notes: [] } as unknown as RunRecord;
    await addPrimeEnvLogAudit(record, EXPORT, logFile, false);
    const table = record.tables.logged_vs_recomputed ?? [];
    // 2 steps x 2 metrics x (all + 2 envs)
    expect(table.length).toBe(12);
    expect(table.filter((r) => r.agrees === false).map((r) => [r.step, r.metric])).toEqual([
      [2, 'entropy/all/mean'],
    ]);
    expect(table.filter((r) => r.signature !== null).map((r) => [r.step, r.metric])).toEqual([
      [2, 'entropy/all/mean'],
    ]);
    expect(record.metrics.logged_values_compared).toBe(12);
    expect(record.metrics.logged_values_with_signature).toBe(1);
    expect(record.tables.logged_metrics_unmatched).toEqual([{ metric: 'loss/mean', steps: 2 }]);
  });
});
