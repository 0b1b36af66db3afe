import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedAudit, type PlainRow } from '../../test/support/auditExpected.js';
import { LAB_ERROR_KIND, LabError } from '../core/errors.js';
import type { JsonValue, RunRecord } from '../experiments/types.js';
import { AUDIT_DEFAULTS, runAudit } from './audit.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labs-audit-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes rows as JSON Lines (an optional raw line can be spliced in at an index). */
async function writeJsonl(path: string, rows: readonly object[], extraLines: Record<number, string> = {}) {
  const lines: string[] = [];
  rows.forEach((r, i) => {
    if (extraLines[i] !== undefined) lines.push(extraLines[i] as string);
    lines.push(JSON.stringify(r));
  });
  await writeFile(path, `${lines.join('\n')}\n`);
}

/** Writes a Parquet file with DuckDB itself: `select` is a SELECT producing the columns. */
async function writeParquet(path: string, select: string) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  await con.run(`COPY (${select}) TO '${path}' (FORMAT parquet)`);
  con.closeSync();
  db.closeSync();
}

function sqlValues(rows: readonly (readonly (string | number | boolean)[])[]): string {
  return rows
    .map(
      (r) =>
        `(${r.map((v) => (typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v))).join(', ')})`,
    )
    .join(', ');
}

async function auditError(p: Promise<unknown>): Promise<LabError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof LabError) return e;
    throw e;
  }
  throw new Error('expected a LabError');
}

/** Compares a record's headline metrics and per-task table with the independent groupby. */
function expectMatchesGroupby(rec: RunRecord, rows: readonly PlainRow[], fail = 0, pass = 1) {
  const e = expectedAudit(rows, fail, pass);
  const m = rec.metrics;
  expect(m.rows).toBe(e.rows);
  expect(m.groups).toBe(e.groups);
  expect(m.all_wrong_groups).toBe(e.all_wrong_groups);
  expect(m.all_right_groups).toBe(e.all_right_groups);
  expect(m.singleton_groups).toBe(e.singleton_groups);
  expect(m.zero_variance_group_fraction).toBeCloseTo(e.zero_variance_group_fraction, 12);
  const perTask = rec.tables.per_task as Record<string, JsonValue>[];
  expect(perTask.length).toBe(e.per_task.size);
  for (const row of perTask) {
    const exp = e.per_task.get(row.task as string);
    expect(exp, `task ${String(row.task)}`).toBeDefined();
    expect(row.groups).toBe(exp?.groups);
    expect(row.samples).toBe(exp?.samples);
    expect(row.zero_variance_groups).toBe(exp?.zero_variance_groups);
    expect(row.zero_variance_fraction as number).toBeCloseTo(exp?.zero_variance_fraction as number, 12);
    expect(row.mean_reward as number).toBeCloseTo(exp?.mean_reward as number, 12);
  }
  if (e.denominators) {
    expect(m.denominators).toEqual(e.denominators);
    expect(m.zero_advantage_action_tokens).toBe(e.zero_advantage_action_tokens);
  }
}

/** A small multi-step batch: every group kind, two tasks per step, tokens and truncation. */
function genericRows(): PlainRow[] {
  const rows: PlainRow[] = [];
  const add = (step: number, group: string, task: string, rewards: number[], trunc: boolean[] = []) => {
    rewards.forEach((reward, i) => {
      rows.push({
        step,
        group,
        task,
        reward,
        action_tokens: 3 + ((i * 5 + step) % 7),
        env_tokens: (i * 3 + group.length) % 4,
        truncated: trunc[i] ?? false,
      });
    });
  };
  add(1, 'g-add', 'add 2+3', [1, 1, 1, 1], [false, false, true]); // all right, one truncated
  add(1, 'g-sub', 'sub 9-4', [0, 0, 0, 0], [true, false, true, false]); // all wrong
  add(1, 'g-mul', 'mul 7*8', [1, 0, 0, 1]); // mixed
  add(1, 'g-one', 'div 8/2', [1]); // singleton
  add(2, 'g-add', 'add 2+3', [1, 1, 1]); // all right, group of 3
  add(2, 'g-sub', 'sub 9-4', [0, 1, 0, 0]); // mixed
  add(2, 'g-mul', 'mul 7*8', [0.5, 0.5]); // all equal, neither wrong nor right
  add(3, 'g-sub', 'sub 9-4', [0, 0]);
  return rows;
}

describe('labs audit: generic preset', () => {
  it('JSONL with token counts: same numbers as an independent groupby, denominators included', async () => {
    const rows = genericRows();
    const file = join(dir, 'generic.jsonl');
    await writeJsonl(file, rows);
    const rec = await runAudit(file, { preset: 'generic' });
    expectMatchesGroupby(rec, rows);
    // hand check of the headline: 8 groups, 5 zero-variance (2 all-right, 2 all-wrong, 1 at 0.5)
    expect(rec.metrics.groups).toBe(8);
    expect(rec.metrics.zero_variance_groups).toBe(5);
    expect(rec.metrics.all_wrong_groups).toBe(2);
    expect(rec.metrics.all_right_groups).toBe(2);
    expect(rec.metrics.truncated_samples).toBe(3);
    expect(rec.metrics.truncated_fraction).toBeCloseTo(3 / rows.length, 12);
    // two truncated samples in the all-wrong group of step 1, one in the all-right group
    expect(rec.metrics.truncated_correct_samples).toBe(1);
    expect(rec.metrics.truncated_mean_reward).toBeCloseTo(1 / 3, 12);
    const perTask = rec.tables.per_task as Record<string, JsonValue>[];
    // sorted by wasted samples: add 2+3 has 4 + 3 samples in zero-variance groups, sub 9-4 has 4 + 2
    expect(perTask[0]).toMatchObject({ task: 'add 2+3', wasted_samples: 7, status: 'always solved' });
    expect(perTask[1]).toMatchObject({ task: 'sub 9-4', wasted_samples: 6, status: 'sometimes solved' });
    expect(perTask.find((t) => t.task === 'div 8/2')).toMatchObject({
      singleton_groups: 1,
      wasted_samples: 0,
    });
    expect(rec.tables.group_sizes).toEqual([
      { size: 1, groups: 1 },
      { size: 2, groups: 2 },
      { size: 3, groups: 1 },
      { size: 4, groups: 4 },
    ]);
    const steps = rec.tables.steps as Record<string, JsonValue>[];
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3]);
    expect(steps[2]).toMatchObject({ groups: 1, all_wrong_groups: 1, zero_variance_fraction: 1 });
  });

  it('Parquet with a per-token mask array: tokens are counted from the mask', async () => {
    const file = join(dir, 'generic.parquet');
    // masks: ones = action tokens, zeros = env tokens
    await writeParquet(
      file,
      `SELECT step, "group", task, reward, mask FROM (VALUES
         (1, 'a', 'task-a', 1.0, [1, 1, 0, 0, 1]),
         (1, 'a', 'task-a', 1.0, [1, 1]),
         (1, 'b', 'task-b', 0.0, [0, 0, 0]),
         (1, 'b', 'task-b', 1.0, [1, 0, 1, 1, 1, 0, 1])) t(step, "group", task, reward, mask)`,
    );
    const rec = await runAudit(file, { preset: 'generic' });
    const rows: PlainRow[] = [
      { step: 1, group: 'a', task: 'task-a', reward: 1, action_tokens: 3, env_tokens: 2 },
      { step: 1, group: 'a', task: 'task-a', reward: 1, action_tokens: 2, env_tokens: 0 },
      { step: 1, group: 'b', task: 'task-b', reward: 0, action_tokens: 0, env_tokens: 3 },
      { step: 1, group: 'b', task: 'task-b', reward: 1, action_tokens: 5, env_tokens: 2 },
    ];
    expectMatchesGroupby(rec, rows);
    expect(rec.metrics.denominators).toEqual({
      'token-mean': 10,
      'seq-mean-token-sum': 3,
      'seq-mean-token-mean': 3,
      'seq-mean-token-sum-norm': 7,
    });
    expect(rec.metrics.zero_advantage_action_tokens).toBe(5);
  });

  it('the shipped example (examples/generic-rollouts.jsonl) gives the groupby numbers', async () => {
    const file = fileURLToPath(new URL('../../examples/generic-rollouts.jsonl', import.meta.url));
    const rows = (await readFile(file, 'utf8'))
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as PlainRow);
    const rec = await runAudit(file, { preset: 'generic' });
    expectMatchesGroupby(rec, rows);
    expect(rec.metrics.truncated_samples).toBe(rows.filter((r) => r.truncated).length);
  });

  it('reads remapped columns and a custom pass value', async () => {
    const file = join(dir, 'remap.jsonl');
    const rows = [
      { it: 1, uid: 'u1', q: 'x', acc: 2 },
      { it: 1, uid: 'u1', q: 'x', acc: 2 },
      { it: 1, uid: 'u2', q: 'y', acc: -1 },
      { it: 1, uid: 'u2', q: 'y', acc: -1 },
    ];
    await writeJsonl(file, rows);
    const rec = await runAudit(file, {
      preset: 'generic',
      columns: { step: 'it', group: 'uid', task: 'q', reward: 'acc' },
      passValue: 2,
    });
    expect(rec.metrics).toMatchObject({ groups: 2, all_right_groups: 1, all_wrong_groups: 1 });
    expect(rec.metrics.denominators).toBeUndefined();
  });
});

describe('labs audit: thresholds', () => {
  it('refuses a pass value at or below the fail value instead of misclassifying groups', async () => {
    // before: passValue 0, failValue 1 ran and counted the all-right group as all_wrong
    const file = join(dir, 'thresholds.jsonl');
    await writeJsonl(file, [
      { step: 1, group: 'g', task: 't', reward: 1 },
      { step: 1, group: 'g', task: 't', reward: 1 },
    ]);
    for (const [passValue, failValue] of [
      [0, 1],
      [0.5, 0.5],
    ] as const) {
      const e = await auditError(runAudit(file, { passValue, failValue }));
      expect(e.code).toBe('BAD_ARGUMENT');
      expect(e.message).toMatch(
        new RegExp(`^passValue ${passValue} must be greater than failValue ${failValue}`),
      );
    }
    for (const passValue of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect((await auditError(runAudit(file, { passValue }))).code).toBe('BAD_ARGUMENT');
    }
    expect((await runAudit(file)).metrics.all_right_groups).toBe(1);
  });
});

describe('labs audit: verl preset', () => {
  it('a directory of <step>.jsonl files; group = (step, input); extras ignored', async () => {
    const d = join(dir, 'verl');
    await mkdir(d);
    const mk = (step: number, input: string, score: number, output: string) => ({
      input,
      output,
      gts: '5',
      score,
      step,
      acc: score > 0,
    });
    const step1 = [
      mk(1, 'Q: 2+3?', 1, 'five'),
      mk(1, 'Q: 2+3?', 1, '5'),
      mk(1, 'Q: 9-4?', 0, 'thirteen'),
      mk(1, 'Q: 9-4?', 1, '5'),
    ];
    const step2 = [mk(2, 'Q: 2+3?', 0, 'no idea at all'), mk(2, 'Q: 2+3?', 0, 'six')];
    await writeJsonl(join(d, '1.jsonl'), step1);
    await writeJsonl(join(d, '2.jsonl'), step2);
    await writeFile(join(d, 'notes.txt'), 'not a dump file\n');
    const rec = await runAudit(d, { preset: 'verl' });
    const plain = [...step1, ...step2].map((r) => ({
      step: r.step,
      group: r.input,
      task: r.input,
      reward: r.score,
    }));
    expectMatchesGroupby(rec, plain);
    expect(rec.metrics.files).toBe(2);
    // response length in characters: correct 'five','5','5' -> mean 2; incorrect 'thirteen','no idea at all','six'
    const lengths = rec.tables.length_by_correctness as Record<string, JsonValue>[];
    expect(lengths.find((l) => l.correct === true)?.mean_length).toBeCloseTo((4 + 1 + 1) / 3, 12);
    expect(lengths.find((l) => l.correct === false)?.mean_length).toBeCloseTo((8 + 14 + 3) / 3, 12);
    expect(rec.metrics.length_unit).toBe('characters');
  });

  it('a malformed JSON line is an error naming the file and the physical line', async () => {
    const d = join(dir, 'verl-bad');
    await mkdir(d);
    await writeJsonl(join(d, '1.jsonl'), [{ input: 'q', output: 'a', score: 1, step: 1 }]);
    await writeFile(
      join(d, '2.jsonl'),
      '{"input":"q","output":"a","score":1,"step":2}\n\n{"input":"q" "output":"b","score":0,"step":2}\n',
    );
    const e = await auditError(runAudit(d, { preset: 'verl' }));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.message).toContain('2.jsonl line 3');
    const rec = await runAudit(d, { preset: 'verl', skipBadRows: true });
    expect(rec.metrics.bad_rows_skipped).toBe(1);
    expect(rec.metrics.rows).toBe(2);
    expect(rec.tables.bad_rows).toEqual([
      expect.objectContaining({ line: 3, problem: expect.stringMatching(/malformed/) }),
    ]);
  });

  it.each([
    // [name, lines (null = blank), physical line of the bad one]
    ['no blank lines, bad line 21 of 25', 25, [], 21],
    ['three blank lines before, one after', 6, [2, 3, 4, 6], 5],
    ['a bad last line without a newline', 8, [3], 8],
  ] as const)(
    'malformed JSON at its physical line (%s), with and without --skip-bad-rows',
    async (name, total, blanks, bad) => {
      const d = join(dir, `verl-lines-${name.replace(/\W+/g, '-')}`);
      await mkdir(d);
      const lines: string[] = [];
      let k = 0;
      for (let line = 1; line <= total; line++) {
        if ((blanks as readonly number[]).includes(line)) lines.push('');
        else if (line === bad) lines.push('{"input":"q","output":"x" "score":1,"step":1}');
        else lines.push(JSON.stringify({ input: 'q', output: `o${k++}`, score: k % 2, step: 1 }));
      }
      await writeFile(join(d, '1.jsonl'), bad === total ? lines.join('\n') : `${lines.join('\n')}\n`);
      const e = await auditError(runAudit(d, { preset: 'verl' }));
      expect(e.code).toBe('PARSE_ERROR');
      expect(e.message).toContain(`1.jsonl line ${bad}: malformed JSON`);
      expect(e.details).toMatchObject({ line: bad });
      const rec = await runAudit(d, { preset: 'verl', skipBadRows: true });
      expect(rec.metrics).toMatchObject({ rows: k, bad_rows_skipped: 1 });
      expect(rec.tables.bad_rows).toEqual([
        expect.objectContaining({ line: bad, problem: 'malformed JSON' }),
      ]);
    },
  );

  it('a UTF-8 byte order mark at the start of a file is skipped, and lines keep their numbers', async () => {
    // before: '1.jsonl line 1: malformed JSON' (DuckDB's read_json refuses a BOM)
    const d = join(dir, 'verl-bom');
    await mkdir(d);
    const rows = (step: number) => [
      { input: 'q', output: 'a', score: 1, step },
      { input: 'q', output: 'b', score: 0, step },
      { input: 'r', output: 'c', score: 1, step },
      { input: 'r', output: 'd', score: 1, step },
    ];
    const text = (step: number) =>
      `${rows(step)
        .map((r) => JSON.stringify(r))
        .join('\n')}\n`;
    await writeFile(join(d, '1.jsonl'), text(1));
    await writeFile(join(d, '2.jsonl'), `\uFEFF${text(2)}`);
    const rec = await runAudit(d, { preset: 'verl' });
    const plain = [...rows(1), ...rows(2)].map((r) => ({
      step: r.step,
      group: r.input,
      task: r.input,
      reward: r.score,
    }));
    expectMatchesGroupby(rec, plain);
    // the same numbers as the file without its BOM
    await writeFile(join(dir, 'bom-single.jsonl'), `\uFEFF${text(1)}`);
    await writeFile(join(dir, 'no-bom-single.jsonl'), text(1));
    const a = await runAudit(join(dir, 'bom-single.jsonl'), { preset: 'verl' });
    const b = await runAudit(join(dir, 'no-bom-single.jsonl'), { preset: 'verl' });
    expect(a.metrics).toEqual(b.metrics);
    expect(a.tables.per_task).toEqual(b.tables.per_task);
    // a bad line after a BOM is still named by its physical line, as a parse error
    await writeFile(join(d, '2.jsonl'), `\uFEFF${text(2)}{"input":"q" "score":1}\n`);
    const e = await auditError(runAudit(d, { preset: 'verl' }));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.message).toMatch(/2\.jsonl line 5: malformed JSON/);
    const skipped = await runAudit(d, { preset: 'verl', skipBadRows: true });
    expect(skipped.metrics).toMatchObject({ rows: 8, bad_rows_skipped: 1 });
    // a BOM on a later line is not the start of a file: that line is malformed
    await writeFile(join(d, '2.jsonl'), `${text(2)}\uFEFF${JSON.stringify(rows(2)[0])}\n`);
    expect((await auditError(runAudit(d, { preset: 'verl' }))).message).toMatch(
      /2\.jsonl line 5: malformed JSON/,
    );
  });

  it('a duplicated key is refused with its line, and skipped and counted with --skip-bad-rows', async () => {
    const file = join(dir, 'dup-key.jsonl');
    await writeFile(
      file,
      [
        '{"step":1,"group":"g","task":"t","reward":0}',
        '{"step":1,"group":"g","task":"t","reward":1,"reward":0}',
        '{"step":1,"group":"g","task":"t","reward":0,"extra":1,"extra":2}',
        '',
      ].join('\n'),
    );
    const e = await auditError(runAudit(file, { preset: 'generic' }));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.message).toMatch(/dup-key\.jsonl line 2: duplicate key reward/);
    const rec = await runAudit(file, { preset: 'generic', skipBadRows: true });
    // the row is not kept with either value: 2 rows, both reward 0 (all_wrong), one bad row counted;
    // a duplicated key the audit does not read ('extra') is harmless
    expect(rec.metrics).toMatchObject({ rows: 2, rows_read: 3, bad_rows_skipped: 1, all_wrong_groups: 1 });
    expect(rec.tables.bad_rows).toEqual([
      expect.objectContaining({ line: 2, problem: expect.stringMatching(/^duplicate key reward/) }),
    ]);
  });

  it('a line that is not an object, and a truncated last line (a crashed writer)', async () => {
    const d = join(dir, 'verl-odd');
    await mkdir(d);
    await writeFile(
      join(d, '1.jsonl'),
      '{"input":"a","output":"x","score":1,"step":1}\n[1,2]\n{"input":"a","output":"y","score":0,"step":1}\n{"input":"b","sco',
    );
    const e = await auditError(runAudit(d, { preset: 'verl' }));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.message).toMatch(/1\.jsonl line 2: not a JSON object/);
    const rec = await runAudit(d, { preset: 'verl', skipBadRows: true });
    expect(rec.metrics).toMatchObject({ rows: 2, bad_rows_skipped: 2, groups: 1, mixed_groups: 1 });
    expect((rec.tables.bad_rows as Record<string, JsonValue>[]).map((b) => b.line)).toEqual([2, 4]);
  });

  it('a non-numeric or missing score names the file and line; --skip-bad-rows counts them', async () => {
    const d = join(dir, 'verl-score');
    await mkdir(d);
    await writeJsonl(
      join(d, '7.jsonl'),
      [
        { input: 'q', output: 'a', score: 1, step: 7 },
        { input: 'q', output: 'b', score: 'high', step: 7 },
        { input: 'q', output: 'c', step: 7 },
        { input: 'q', output: 'd', score: 0, step: 7 },
      ],
      { 1: '   ' }, // a blank line before the second record: lines are physical lines
    );
    const e = await auditError(runAudit(d, { preset: 'verl' }));
    expect(e.code).toBe('BAD_VALUE');
    expect(e.message).toMatch(/7\.jsonl line 3: reward is not a number: high \(2 bad rows in all\)/);
    const rec = await runAudit(d, { preset: 'verl', skipBadRows: true });
    expect(rec.metrics).toMatchObject({
      rows: 2,
      rows_read: 4,
      bad_rows_skipped: 2,
      groups: 1,
      mixed_groups: 1,
    });
    expect((rec.tables.bad_rows as Record<string, JsonValue>[]).map((b) => [b.line, b.problem])).toEqual([
      [3, 'reward is not a number: high'],
      [4, 'missing reward (field "score")'],
    ]);
  });

  it('a score key absent from every line is a missing-column error', async () => {
    const d = join(dir, 'verl-noscore');
    await mkdir(d);
    await writeJsonl(join(d, '1.jsonl'), [{ input: 'q', output: 'a', reward: 1, step: 1 }]);
    const e = await auditError(runAudit(d, { preset: 'verl' }));
    expect(e.code).toBe('MISSING_COLUMN');
    expect(e.message).toMatch(/1\.jsonl: column 'score' \(reward\)/);
    const rec = await runAudit(d, { preset: 'verl', columns: { reward: 'reward' } });
    expect(rec.metrics.rows).toBe(1);
  });
});

describe('labs audit: trl preset', () => {
  it('sums the reward columns, recomputes TRL advantages and counts logged ones that differ', async () => {
    const d = join(dir, 'trl');
    await mkdir(d);
    // prompt p1: rewards (acc + fmt) = [1.5, 0.5, 0.5, 0.5]; p2: [1, 1, 1, 1] (all equal -> advantage 0)
    const acc = [1, 0, 0, 0, 1, 1, 1, 1];
    const fmt = [0.5, 0.5, 0.5, 0.5, 0, 0, 0, 0];
    const prompts = ['p1', 'p1', 'p1', 'p1', 'p2', 'p2', 'p2', 'p2'];
    const total = acc.map((a, i) => a + (fmt[i] as number));
    // TRL convention computed here by hand: (r - mean) / (unbiased std + 1e-4)
    const trl = (rs: number[]) => {
      const mean = rs.reduce((s, r) => s + r, 0) / rs.length;
      const sd = Math.sqrt(rs.reduce((s, r) => s + (r - mean) ** 2, 0) / (rs.length - 1));
      return rs.map((r) => (r - mean) / (sd + 1e-4));
    };
    const logged = [...trl(total.slice(0, 4)), ...trl(total.slice(4))];
    logged[1] = 0.123; // two logged advantages that do not follow the convention
    logged[7] = -1;
    await writeParquet(
      join(d, 'completions_00003.parquet'),
      `SELECT * FROM (VALUES ${sqlValues(
        prompts.map((p, i) => [
          3,
          p,
          `completion ${i}`,
          acc[i] as number,
          fmt[i] as number,
          logged[i] as number,
        ]),
      )}) t(step, prompt, completion, accuracy_reward, format_reward, advantage)`,
    );
    const rec = await runAudit(d, { preset: 'trl' });
    expect(rec.config.reward_columns).toEqual(['accuracy_reward', 'format_reward']);
    expectMatchesGroupby(
      rec,
      prompts.map((p, i) => ({ step: 3, group: p, task: p, reward: total[i] as number })),
    );
    expect(rec.metrics).toMatchObject({
      logged_advantages_compared: 8,
      logged_advantages_differing: 2,
      all_right_groups: 1,
    });
    // --reward picks one column instead of the sum: p1 becomes [1,0,0,0], p2 [1,1,1,1]
    const one = await runAudit(d, { preset: 'trl', reward: 'accuracy_reward' });
    expect(one.config.reward_columns).toEqual(['accuracy_reward']);
    expect(one.metrics.mean_reward).toBeCloseTo(5 / 8, 12);
  });

  /** TRL's advantages for contiguous blocks of g, written out here: weights, nansum, scale_rewards. */
  function trlAdvantages(
    perFunc: number[][],
    weights: number[],
    g: number,
    scale: 'group' | 'batch' | 'none',
  ): { rewards: number[]; adv: number[] } {
    const rewards = perFunc.map((fs) =>
      fs.reduce((s, f, j) => s + (Number.isNaN(f) ? 0 : f * (weights[j] as number)), 0),
    );
    const std = (xs: number[]) => {
      const m = xs.reduce((a, b) => a + b, 0) / xs.length;
      return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
    };
    const adv = rewards.map((r, i) => {
      const block = rewards.slice(i - (i % g), i - (i % g) + g);
      const mean = block.reduce((a, b) => a + b, 0) / g;
      if (scale === 'none') return r - mean;
      return (r - mean) / ((scale === 'group' ? std(block) : std(rewards)) + 1e-4);
    });
    return { rewards, adv };
  }

  it('groups TRL rows as TRL does: a prompt drawn twice in a step is two groups, not one', async () => {
    // num_generations 4; dataset rows p1, p1, p2 in one step (the sampler repeats each 4 times)
    const prompts = [...Array(8).fill('p1'), ...Array(4).fill('p2')] as string[];
    const acc = [1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0];
    const perFunc = acc.map((a) => [a, 0]);
    const { adv } = trlAdvantages(perFunc, [1, 1], 4, 'group');
    const d = join(dir, 'trl-repeat');
    await mkdir(d);
    await writeParquet(
      join(d, 'completions_00001.parquet'),
      `SELECT * FROM (VALUES ${sqlValues(prompts.map((p, i) => [1, p, `c${i}`, acc[i] as number, 0, adv[i] as number]))})
         t(step, prompt, completion, acc, fmt, advantage)`,
    );
    const rec = await runAudit(d, { preset: 'trl' });
    expect(rec.config.grouping).toMatch(/contiguous blocks of 4 rows .*inferred/);
    expect(rec.metrics).toMatchObject({
      groups: 3,
      mixed_groups: 3,
      logged_advantages_compared: 12,
      logged_advantages_differing: 0,
    });
    const given = await runAudit(d, { preset: 'trl', groupSize: 4 });
    expect(given.config.grouping).toMatch(/given with --group-size/);
    expect(given.metrics.logged_advantages_differing).toBe(0);
    // blocks of 3 would cut across prompts: refused, naming the rows
    const e = await auditError(runAudit(d, { preset: 'trl', groupSize: 3 }));
    expect(e.message).toMatch(
      /completions_00001\.parquet rows 6-8: a block of 3 rows holds more than one prompt/,
    );
    // --group-size is for contiguous grouping only
    const g = await auditError(runAudit(d, { preset: 'generic', groupSize: 4 }));
    expect(g.message).toMatch(/^--group-size:/);
  });

  it.each([
    ['group', [1, 1]],
    ['group', [1, 0.5]],
    ['batch', [1, 1]],
    ['none', [2, 0.5]],
  ] as const)(
    'recomputes TRL advantages with scale_rewards=%s and reward_weights=%j',
    async (scale, weights) => {
      // two reward functions, one NaN (a function that returned None) skipped by nansum
      const perFunc = [
        [1, 0.5],
        [0, 0.5],
        [0, Number.NaN],
        [1, 0],
        [1, 0.5],
        [1, 0.5],
        [0, 0.25],
        [1, 0.5],
      ];
      const { rewards, adv } = trlAdvantages(perFunc, [...weights], 4, scale);
      const d = join(dir, `trl-scale-${scale}-${weights.join('-')}`);
      await mkdir(d);
      const prompts = ['a', 'a', 'a', 'a', 'b', 'b', 'b', 'b'];
      await writeParquet(
        join(d, 'completions_00001.parquet'),
        `SELECT * FROM (VALUES ${prompts
          .map((p, i) => {
            const [a, f] = perFunc[i] as [number, number];
            return `(1, '${p}', 'c${i}', ${a}::DOUBLE, ${Number.isNaN(f) ? "'nan'::DOUBLE" : `${f}::DOUBLE`}, ${adv[i]}::DOUBLE)`;
          })
          .join(', ')}) t(step, prompt, completion, acc, fmt, advantage)`,
      );
      const rec = await runAudit(d, { preset: 'trl', scaleRewards: scale, rewardWeights: [...weights] });
      expect(rec.metrics.mean_reward).toBeCloseTo(rewards.reduce((a, b) => a + b, 0) / 8, 12);
      expect(rec.metrics).toMatchObject({ logged_advantages_compared: 8, logged_advantages_differing: 0 });
      expect(rec.config).toMatchObject({ scale_rewards: scale, reward_weights: [...weights] });
      // the defaults (group scaling, weights 1) disagree with a dump written under other settings
      if (scale !== 'group' || weights[1] !== 1) {
        const plain = await runAudit(d, { preset: 'trl' });
        expect(plain.metrics.logged_advantages_differing as number).toBeGreaterThan(0);
      }
    },
  );

  it('refuses reward weights that do not match the reward columns', async () => {
    const d = join(dir, 'trl-repeat');
    const e = await auditError(runAudit(d, { preset: 'trl', rewardWeights: [1, 2, 3] }));
    // a usage error (the CLI exits 2), not a run-time failure
    expect(e.code).toBe('BAD_CLI');
    expect(LAB_ERROR_KIND[e.code]).toBe('usage');
    expect(e.message).toMatch(
      /--reward-weights: 3 weight\(s\) for 2 reward column\(s\) \(acc, fmt, in this order\)/,
    );
  });

  it('a non-finite reward names the Parquet file and row', async () => {
    const d = join(dir, 'trl-bad');
    await mkdir(d);
    await writeParquet(
      join(d, 'completions_00001.parquet'),
      `SELECT * FROM (VALUES (1, 'p', 'c', 1.0::DOUBLE, 0.0::DOUBLE), (1, 'p', 'c', 'inf'::DOUBLE, 0.0::DOUBLE))
         t(step, prompt, completion, r, advantage)`,
    );
    const e = await auditError(runAudit(d, { preset: 'trl' }));
    expect(e.code).toBe('BAD_VALUE');
    expect(e.message).toMatch(/completions_00001\.parquet row 1: reward is not finite/);
  });

  it('a directory without completions_*.parquet files is an IO error', async () => {
    const d = join(dir, 'trl-empty');
    await mkdir(d);
    const e = await auditError(runAudit(d, { preset: 'trl' }));
    expect(e.code).toBe('IO_ERROR');
    expect(e.message).toMatch(/no dump files for preset 'trl'/);
  });

  it('a missing prompt column names the file', async () => {
    const d = join(dir, 'trl-noprompt');
    await mkdir(d);
    await writeParquet(
      join(d, 'completions_00002.parquet'),
      `SELECT 2 AS step, 'c' AS completion, 1.0 AS r, 0.0 AS advantage`,
    );
    const e = await auditError(runAudit(d, { preset: 'trl' }));
    expect(e.code).toBe('MISSING_COLUMN');
    expect(e.message).toMatch(/completions_00002\.parquet: column 'prompt'/);
  });
});

describe('labs audit: inputs the engine used to report raw (issue 25, item 11)', () => {
  const line = (o: object) => Buffer.from(`${JSON.stringify(o)}\n`);
  const row = (step: number | string, group: string, reward: number, extra: object = {}) =>
    line({ step, group, task: `task ${group}`, reward, ...extra });

  it('bytes that are not UTF-8 are named at their physical line, and skipped with --skip-bad-rows', async () => {
    // before: DuckDB's 'line 4' for a bad byte on line 3, and with --skip-bad-rows an error
    // suggesting read_blob
    const d = join(dir, 'not-utf8');
    await mkdir(d);
    await writeFile(join(d, '1.jsonl'), Buffer.concat([row(1, 'a', 1), row(1, 'a', 0)]));
    const bad = Buffer.from('{"step":2,"group":"a","task":"t\xff\xfe","reward":0}\n', 'latin1');
    await writeFile(
      join(d, '2.jsonl'),
      Buffer.concat([row(2, 'a', 1), Buffer.from('\n'), bad, row(2, 'a', 0), row(2, 'é', 1), row(2, 'é', 1)]),
    );
    const e = await auditError(runAudit(d));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.message).toMatch(/2\.jsonl line 3: not valid UTF-8 text; use --skip-bad-rows/);
    expect(e.details).toMatchObject({ line: 3 });
    const rec = await runAudit(d, { skipBadRows: true });
    expect(rec.metrics).toMatchObject({ rows: 6, bad_rows_skipped: 1, groups: 3, all_right_groups: 1 });
    expect(rec.tables.bad_rows).toEqual([
      expect.objectContaining({ line: 3, problem: 'not valid UTF-8 text' }),
    ]);
    // the valid multi-byte text of the other lines is kept as it is
    expect((rec.tables.per_task as Record<string, JsonValue>[]).map((t) => t.task).sort()).toEqual([
      'task a',
      'task é',
    ]);
  });

  it('a step or token count beyond 2^53 is a bad value at its line, not an engine cast error', async () => {
    // before: 'Conversion Error: ... when casting from source column step_d'
    const file = join(dir, 'huge-step.jsonl');
    await writeFile(file, Buffer.concat([row(1, 'a', 1), row(1e23, 'a', 0), row(1, 'a', 0)]));
    const e = await auditError(runAudit(file));
    expect(e.code).toBe('BAD_VALUE');
    expect(e.message).toMatch(/huge-step\.jsonl line 2: step is not an integer/);
    expect(e.message).not.toMatch(/step_d/);
    const rec = await runAudit(file, { skipBadRows: true });
    expect(rec.metrics).toMatchObject({ rows: 2, bad_rows_skipped: 1 });
    const tokens = join(dir, 'huge-tokens.jsonl');
    await writeFile(
      tokens,
      Buffer.concat([
        row(1, 'a', 1, { action_tokens: 3, env_tokens: 0 }),
        row(1, 'a', 0, { action_tokens: 1e23, env_tokens: 0 }),
      ]),
    );
    const t = await auditError(runAudit(tokens));
    expect(t.code).toBe('BAD_VALUE');
    expect(t.message).toMatch(/huge-tokens\.jsonl line 2: action_tokens is not a non-negative integer/);
    // 2^53 itself is still an integer a float64 holds exactly
    await writeFile(file, Buffer.concat([row(2 ** 53, 'a', 1), row(2 ** 53, 'a', 0)]));
    expect((await runAudit(file)).tables.steps).toEqual([expect.objectContaining({ step: 2 ** 53 })]);
  });

  it('rewards of +-1e300 get their right population std under --zero-std-tol', async () => {
    // before: 'internal error: Out of Range Error: STDDEV_POP is out of range!'
    const file = join(dir, 'huge-rewards.jsonl');
    await writeFile(
      file,
      Buffer.concat([
        row(1, 'a', 1e300),
        row(1, 'a', -1e300), // std 1e300, range 2e300
        row(1, 'b', 1e300),
        row(1, 'b', 1e300), // exact
        row(1, 'c', 1e300),
        row(1, 'c', 1.5e300), // std 0.25e300, range 0.5e300
        row(1, 'd', -1e300),
        row(1, 'd', 1e300),
        row(1, 'd', 1e300), // std sqrt(8)/3 * 1e300 (about 0.943e300), range 2e300
      ]),
    );
    const upTo = async (tol: number) => {
      const m = (await runAudit(file, { zeroStdTol: tol })).metrics;
      expect(m.zero_variance_groups).toBe(1);
      return [m.zero_variance_only_up_to_tol_std, m.zero_variance_only_up_to_tol_range];
    };
    expect(await upTo(0.24e300)).toEqual([0, 0]);
    expect(await upTo(0.26e300)).toEqual([1, 0]);
    expect(await upTo(0.5e300)).toEqual([1, 1]);
    expect(await upTo(0.94e300)).toEqual([1, 1]);
    expect(await upTo(0.95e300)).toEqual([2, 1]);
    expect(await upTo(1e300)).toEqual([3, 1]);
    expect(await upTo(2e300)).toEqual([3, 3]);
    // TRL's recomputed advantage (sample std) over such rewards: (r - mean) / (std + 1e-4)
    const d = join(dir, 'trl-huge');
    await mkdir(d);
    await writeParquet(
      join(d, 'completions_00001.parquet'),
      `SELECT * FROM (VALUES ${sqlValues([
        [1, 'p', 'c1', 1e300, Math.SQRT1_2],
        [1, 'p', 'c2', -1e300, -0.7],
        [1, 'q', 'c3', 1e300, 0],
        [1, 'q', 'c4', 1e300, 0],
      ])}) t(step, prompt, completion, r1, advantage)`,
    );
    const trl = await runAudit(d, { preset: 'trl' });
    expect(trl.metrics).toMatchObject({ logged_advantages_compared: 4, logged_advantages_differing: 1 });
    expect(trl.metrics.logged_advantage_max_abs_diff as number).toBeCloseTo(Math.SQRT1_2 - 0.7, 12);
    expect(trl.metrics.mean_reward).toBe(5e299);
  });

  it('rewards near the float64 limit have their finite mean, not Infinity or NaN', async () => {
    // before: mean_reward "Infinity" (the sum of 1.5e308 + 1.5e308 overflows), or NaN once +Inf
    // and -Inf met; the mean of finite rewards is finite
    const file = join(dir, 'near-max-rewards.jsonl');
    const t = { truncated: true };
    const f = { truncated: false };
    await writeFile(
      file,
      Buffer.concat([
        row(1, 'a', 1.5e308, t),
        row(1, 'a', 1.5e308, t),
        row(1, 'b', 1.5e308, t),
        row(1, 'b', 1e308, f),
        row(2, 'c', -1.5e308, f),
        row(2, 'c', -1.5e308, f),
        row(2, 'c', 1e-300, f),
      ]),
    );
    const rec = await runAudit(file);
    // within a few ulp of the exact mean (the sums' order is DuckDB's)
    const near = (got: JsonValue | undefined, want: number) =>
      expect(Math.abs((got as number) - want) / Math.abs(want)).toBeLessThan(1e-15);
    near(rec.metrics.mean_reward, (4.5 + 1 - 3) * (1e308 / 7)); // sum 2.5e308 over 7
    const steps = rec.tables.steps as Record<string, JsonValue>[];
    near(steps[0]?.mean_reward, 1.375e308);
    near(steps[1]?.mean_reward, -1e308);
    near(rec.metrics.truncated_mean_reward, 1.5e308);
    const tasks = rec.tables.per_task as Record<string, JsonValue>[];
    near(tasks.find((x) => x.task === 'task a')?.mean_reward, 1.5e308);
    near(tasks.find((x) => x.task === 'task c')?.mean_reward, -1e308);
    // tiny rewards keep their plain sum: nothing is lost to the scaling
    const tiny = join(dir, 'tiny-rewards.jsonl');
    await writeFile(tiny, Buffer.concat([row(1, 'a', 1e-300), row(1, 'a', 3e-300)]));
    expect((await runAudit(tiny)).metrics.mean_reward).toBe((1e-300 + 3e-300) / 2);
  });

  it('a reward distribution spanning more than the float64 range gets finite bins', async () => {
    // before: 'internal error: Binder Error: Referenced column "Infinity" not found' (max - min
    // overflows, so the bin width was Infinity)
    const file = join(dir, 'wide-rewards.jsonl');
    await writeFile(
      file,
      Buffer.concat(Array.from({ length: 21 }, (_, i) => row(1, `g${i % 3}`, (i - 10) * 1.5e307))),
    );
    const bins = (await runAudit(file)).tables.reward_distribution as Record<string, number>[];
    expect(bins).toHaveLength(10);
    expect(bins.reduce((n, b) => n + (b.samples as number), 0)).toBe(21);
    expect(bins[0]?.bin_lo).toBe(-1.5e308);
    expect(bins.at(-1)?.bin_hi).toBe(1.5e308);
    // width 3e307: two rewards per bin, three in the last (its upper edge included)
    expect(bins.map((b) => b.samples)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2, 3]);
    for (const b of bins) expect(Number.isFinite(b.bin_lo) && Number.isFinite(b.bin_hi)).toBe(true);
  });

  it('running out of memory under memoryLimit is its own error naming the limit', async () => {
    // before: PARSE_ERROR 'reading the dump: Out of Memory Error: ...'
    const e = await auditError(
      runAudit(fileURLToPath(new URL('../../examples/generic-rollouts.jsonl', import.meta.url)), {
        memoryLimit: '1KB',
      }),
    );
    expect(e.code).toBe('OUT_OF_MEMORY');
    expect(e.message).toMatch(/memory limit 1KB/);
    expect(LAB_ERROR_KIND[e.code]).toBe('runtime');
  });
});

describe('AUDIT_DEFAULTS', () => {
  it('is frozen to the leaves: a stray assignment throws instead of changing every later audit', () => {
    expect(() => {
      (AUDIT_DEFAULTS as { passValue: number }).passValue = 0.5;
    }).toThrow(TypeError);
    expect(() => {
      (AUDIT_DEFAULTS.columns as Record<string, string>).reward = 'score';
    }).toThrow(TypeError);
    expect(AUDIT_DEFAULTS.passValue).toBe(1);
  });
});
