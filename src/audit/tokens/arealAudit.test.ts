/**
 * `--preset areal` on a dump written as AReaL's `_dump_trajectory` writes it
 * (areal/infra/workflow_executor.py: `<dump_dir>/<tail_version>/<task_id>.jsonl`, one line per
 * sample with head/tail versions, seqlen, prompt_len, reward): the version span per sample and per
 * completion token, by span and by tail version; a bad line is one located error.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTokenAudit } from './tokenAudit.js';

function sample(
  task: string,
  i: number,
  head: number,
  tail: number,
  seqlen: number,
  prompt: number,
  reward: number,
) {
  return JSON.stringify({
    task_id: task,
    sample_idx: i,
    seqlen,
    prompt_len: prompt,
    head_version: head,
    tail_version: tail,
    reward,
    prompt: 'p',
    completion: 'c',
  });
}

function dump(extra: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'labs-areal-'));
  mkdirSync(join(dir, '3'));
  mkdirSync(join(dir, '4'));
  // version 3: two on-policy samples (10 and 30 completion tokens); version 4: span 1 and span 2
  writeFileSync(
    join(dir, '3', 't0.jsonl'),
    `${[sample('t0', 0, 3, 3, 20, 10, 1), sample('t0', 1, 3, 3, 40, 10, 0)].join('\n')}\n`,
  );
  writeFileSync(
    join(dir, '4', 't1.jsonl'),
    `${[sample('t1', 0, 3, 4, 30, 10, 1), sample('t1', 1, 2, 4, 50, 10, 0), ...extra].join('\n')}\n`,
  );
  return dir;
}

describe('labs audit --preset areal', () => {
  it('version span per sample and per token, by span and by tail version', async () => {
    const r = await runTokenAudit(dump(), { preset: 'areal' });
    expect(r.metrics.samples).toBe(4);
    expect(r.metrics.completion_tokens).toBe(10 + 30 + 20 + 40);
    expect(r.metrics.mean_version_span).toBeCloseTo((0 + 0 + 1 + 2) / 4, 12);
    expect(r.metrics.token_weighted_version_span).toBeCloseTo((1 * 20 + 2 * 40) / 100, 12);
    expect(r.metrics.max_version_span).toBe(2);
    expect(r.metrics.off_policy_sample_fraction).toBe(0.5);
    expect(r.tables.staleness_by_span).toEqual([
      { span: 0, samples: 2, tokens: 40, mean_reward: 0.5 },
      { span: 1, samples: 1, tokens: 20, mean_reward: 1 },
      { span: 2, samples: 1, tokens: 40, mean_reward: 0 },
    ]);
    expect(r.tables.staleness_by_version?.map((x) => x.tail_version)).toEqual([3, 4]);
  });

  it('a line whose head version is after its tail version is a located error; skip counts it', async () => {
    const dir = dump([sample('t1', 2, 5, 4, 30, 10, 1)]);
    await expect(runTokenAudit(dir, { preset: 'areal' })).rejects.toThrow(
      /4\/t1\.jsonl line 3: head_version 5 > tail_version 4/,
    );
    const r = await runTokenAudit(dir, { preset: 'areal', skipBadRows: true });
    expect(r.metrics.bad_rows_skipped).toBe(1);
    expect(r.metrics.samples).toBe(4);
  });

  it('refuses the log-prob options: the dump has no log-probs', async () => {
    await expect(runTokenAudit(dump(), { preset: 'areal', whatIf: ['trl:token_mask'] })).rejects.toThrow(
      /AReaL dump has none/,
    );
  });
});
