import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabError } from '../core/errors.js';
import type { JsonValue } from '../experiments/types.js';
import { runAudit } from './audit.js';

const examples = ['generic-rollouts.jsonl', 'ranker-rollouts.jsonl'].map((f) =>
  fileURLToPath(new URL(`../../examples/${f}`, import.meta.url)),
);

interface Row {
  step: number;
  group: string;
  reward: number;
  action_tokens: number;
}

/**
 * The policies computed independently with plain loops over the JSON lines: groups by (step,
 * group); exact = >= 2 members all equal; population std and max - min against `tol`.
 */
function expected(file: string, tol: number) {
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Row);
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const k = `${r.step}\u0000${r.group}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  let action = 0;
  // groups, samples, action tokens
  const out: Record<'exact' | 'std' | 'range', [number, number, number]> = {
    exact: [0, 0, 0],
    std: [0, 0, 0],
    range: [0, 0, 0],
  };
  for (const members of groups.values()) {
    const rs = members.map((m) => m.reward);
    const a = members.reduce((s, m) => s + m.action_tokens, 0);
    action += a;
    if (members.length < 2) continue;
    const mean = rs.reduce((s, r) => s + r, 0) / rs.length;
    const std = Math.sqrt(rs.reduce((s, r) => s + (r - mean) ** 2, 0) / rs.length);
    const range = Math.max(...rs) - Math.min(...rs);
    const add = (key: keyof typeof out) => {
      out[key][0] += 1;
      out[key][1] += members.length;
      out[key][2] += a;
    };
    if (range === 0) add('exact');
    if (std <= tol) add('std');
    if (range <= tol) add('range');
  }
  return { groups: groups.size, action, ...out };
}

type Rec = Record<string, JsonValue>;

describe('labs audit: what each zero-variance policy would have done', () => {
  it.each(examples)('matches an independent computation on %s', async (file) => {
    const tol = 1e-6;
    const e = expected(file, tol);
    const rec = await runAudit(file, { preset: 'generic', zeroStdTol: tol });
    expect(rec.metrics).toMatchObject({
      dynamic_sampling_dropped_groups: e.exact[0],
      dynamic_sampling_dropped_samples: e.exact[1],
      dynamic_sampling_kept_groups: e.groups - (e.exact[0] as number),
      token_mean_denominator_with_zero_variance: e.action,
      token_mean_denominator_without_zero_variance: e.action - (e.exact[2] as number),
      zero_variance_only_up_to_tol_std: (e.std[0] as number) - (e.exact[0] as number),
      zero_variance_only_up_to_tol_range: (e.range[0] as number) - (e.exact[0] as number),
    });
    const rules = rec.tables.zero_variance_rules as Rec[];
    expect(
      rules.map((r) => [r.groups, r.samples, r.action_tokens, r.token_mean_denominator_without]),
    ).toEqual(
      (['exact', 'std', 'range'] as const).map((k) => [
        e[k][0],
        e[k][1],
        e[k][2],
        e.action - (e[k][2] as number),
      ]),
    );
  });

  it('the float-noise group of the ranker example is zero-variance only up to the tolerance', async () => {
    // "grade essay D" at step 1: rewards 0.7, 0.70000001, 0.7, 0.69999999 (std ~7e-9, range 2e-8)
    const rec = await runAudit(examples[1] as string, { preset: 'generic', zeroStdTol: 1e-6 });
    expect(rec.metrics).toMatchObject({
      zero_variance_only_up_to_tol_std: 1,
      zero_variance_only_up_to_tol_range: 1,
    });
    const tight = await runAudit(examples[1] as string, { preset: 'generic', zeroStdTol: 1e-9 });
    expect(tight.metrics).toMatchObject({
      zero_variance_only_up_to_tol_std: 0,
      zero_variance_only_up_to_tol_range: 0,
    });
    const none = await runAudit(examples[1] as string, { preset: 'generic' });
    expect(none.metrics.zero_variance_only_up_to_tol_std).toBeNull();
    expect((none.tables.zero_variance_rules as Rec[]).length).toBe(1);
  });

  describe('edge cases', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'labs-zv-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('a dump where no group has variance gets a statement, not a division by zero', async () => {
      const file = join(dir, 'flat.jsonl');
      const rows = [0, 0, 1, 1].map((reward, i) => ({
        step: 1,
        group: i < 2 ? 'a' : 'b',
        task: 't',
        reward,
        action_tokens: 5,
        env_tokens: 0,
      }));
      await writeFile(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
      const rec = await runAudit(file, { preset: 'generic', zeroStdTol: 0 });
      expect(rec.metrics).toMatchObject({
        dynamic_sampling_dropped_groups: 2,
        dynamic_sampling_kept_groups: 0,
        dynamic_sampling_kept_fraction: 0,
        token_mean_denominator_with_zero_variance: 20,
        token_mean_denominator_without_zero_variance: 0,
      });
      expect(
        rec.notes?.some((n) => n.startsWith('no group has reward variance: all 2 multi-member groups')),
      ).toBe(true);
      expect(JSON.stringify(rec.metrics)).not.toMatch(/NaN|Infinity/);
    });

    it('a negative or non-finite tolerance is an error naming the option', async () => {
      for (const bad of [-1e-6, Number.NaN]) {
        const e = await runAudit(examples[0] as string, { zeroStdTol: bad }).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(LabError);
        expect((e as LabError).message).toMatch(/^--zero-std-tol: expected a finite number >= 0/);
      }
    });
  });
});
