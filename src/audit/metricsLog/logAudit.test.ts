/**
 * `labs audit DUMP --metrics LOG` end to end, through the built CLI (dist/; run `npm run build`):
 * a verl dump and a TensorBoard log written by the test with planted disagreements.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventFileBytes } from '../../../test/support/tfeventsWriter.js';

const CLI = resolve('dist/cli/main.js');

function labs(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Per step: (prompt, score, response_length in tokens); two samples per prompt.
const DUMP: Record<number, [string, number, number][]> = {
  1: [
    ['p', 1, 4],
    ['p', 0, 8],
    ['q', 1, 3],
    ['q', 1, 5],
  ], // score mean 0.75, length mean 5, clip ratio (>= 8) 0.25
  2: [
    ['p', 0, 8],
    ['p', 0, 8],
    ['q', 1, 2],
    ['q', 0, 6],
  ], // 0.25, 6, 0.5
  3: [
    ['p', 0.1, 3],
    ['p', 0.1, 3],
    ['q', 0.1, 3],
    ['q', 0.4, 3],
  ], // 0.175, 3, 0
};

async function writeDump(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [step, rows] of Object.entries(DUMP)) {
    const lines = rows.map(([input, score, len], i) =>
      JSON.stringify({
        input,
        output: `answer ${i} `.repeat(len),
        gts: 'x',
        score,
        step: Number(step),
        response_length: len,
      }),
    );
    await writeFile(join(dir, `${step}.jsonl`), `${lines.join('\n')}\n`);
  }
}

const LOG = [
  { step: 1, tag: 'critic/score/mean', value: 0.75 },
  { step: 2, tag: 'critic/score/mean', value: 0.5 }, // planted: the dump says 0.25
  { step: 3, tag: 'critic/score/mean', value: 0.175 }, // float32-rounded by the writer: agrees
  { step: 1, tag: 'response_length/mean', value: 5 },
  { step: 2, tag: 'response_length/mean', value: 6 },
  { step: 3, tag: 'response_length/mean', value: 3 },
  { step: 4, tag: 'response_length/mean', value: 7 }, // a step the dump lacks
  { step: 1, tag: 'response_length/clip_ratio', value: 0 }, // planted: constant 0, the dump says 0.25
  { step: 2, tag: 'response_length/clip_ratio', value: 0 }, // planted: the dump says 0.5
  { step: 3, tag: 'response_length/clip_ratio', value: 0 },
  { step: 1, tag: 'timing_s/gen', value: 12 }, // matches nothing
];

describe('labs audit --metrics (built CLI)', () => {
  it('reports every planted disagreement, and no false one, with the known signature', async () => {
    const root = await mkdtemp(join(tmpdir(), 'labs-logaudit-'));
    await writeDump(join(root, 'dump'));
    await mkdir(join(root, 'tb'));
    await writeFile(join(root, 'tb', 'events.out.tfevents.1.host'), eventFileBytes(LOG));
    const args = [
      'audit',
      join(root, 'dump'),
      '--preset',
      'verl',
      '--metrics',
      join(root, 'tb'),
      '--max-response-length',
      '8',
    ];
    const r = labs([...args, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const record = JSON.parse(r.stdout);
    const rows = record.tables.logged_vs_recomputed as {
      step: number;
      metric: string;
      logged: number | null;
      recomputed: number | null;
      agrees: boolean | null;
      signature: string | null;
    }[];
    expect(rows.length).toBe(9); // 3 matched metrics × 3 dump steps
    const bad = rows.filter((x) => x.agrees === false).map((x) => `${x.step} ${x.metric}`);
    expect(bad.sort()).toEqual([
      '1 response_length/clip_ratio',
      '2 critic/score/mean',
      '2 response_length/clip_ratio',
    ]);
    expect(rows.every((x) => x.agrees !== null)).toBe(true);
    const sig = rows.filter((x) => x.signature !== null);
    expect(sig.map((x) => `${x.step} ${x.metric}`).sort()).toEqual([
      '1 response_length/clip_ratio',
      '2 response_length/clip_ratio',
    ]);
    expect(sig[0]?.signature).toContain('verl #7823');
    const at = (step: number, metric: string) => rows.find((x) => x.step === step && x.metric === metric);
    expect(at(2, 'response_length/clip_ratio')?.recomputed).toBe(0.5);
    expect(at(3, 'critic/score/mean')?.recomputed).toBeCloseTo(0.175, 12);
    expect(record.tables.logged_metrics_unmatched).toEqual([{ metric: 'timing_s/gen', steps: 1 }]);
    expect(record.notes).toContain('log step(s) not in the dump: 4');
    expect(record.metrics.logged_values_disagreeing).toBe(3);
    // The length anatomy from the same dump: step 2's correct response has 2 tokens, incorrect 22/3.
    const anatomy = record.tables.length_anatomy as Record<string, unknown>[];
    const s2 = anatomy.find((x) => x.step === 2);
    expect(s2?.mean_length_correct).toBe(2);
    expect(s2?.mean_length_incorrect).toBeCloseTo(22 / 3, 12);
    expect(s2?.truncated_zero_reward_share).toBe(0.5);

    // The terminal shows the disagreements, the signature, the unmatched names and the step.
    const t = labs(args);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('9 value(s) compared, 3 disagree');
    expect(t.stdout).toMatch(/2 +critic\/score\/mean +0\.5 +0\.25 +no/);
    expect(t.stdout).toContain('signature: clip ratio constant');
    expect(t.stdout).toContain('1 logged metric name(s) match nothing recomputable: timing_s/gen');
    expect(t.stdout).toContain('note: log step(s) not in the dump: 4');
  });

  it('reads what is complete of a log still being written; a CRC mismatch fails naming file and offset', async () => {
    const root = await mkdtemp(join(tmpdir(), 'labs-logaudit-'));
    await writeDump(join(root, 'dump'));
    const bytes = eventFileBytes(LOG);
    const file = join(root, 'events.out.tfevents.2.host');
    await writeFile(file, bytes.subarray(0, bytes.length - 5));
    const r = labs(['audit', join(root, 'dump'), '--preset', 'verl', '--metrics', file, '--json']);
    expect(r.code).toBe(0);
    const record = JSON.parse(r.stdout);
    expect(record.notes.join('\n')).toMatch(
      /metrics log: .*events\.out\.tfevents\.2\.host: partial record at byte \d+/,
    );
    expect(record.tables.logged_metrics_unmatched).toEqual([]); // timing_s/gen was the cut record
    const bad = Buffer.from(bytes);
    bad[40] = (bad[40] as number) ^ 0xff;
    await writeFile(file, bad);
    const e = labs(['audit', join(root, 'dump'), '--preset', 'verl', '--metrics', file]);
    expect(e.code).toBe(1);
    expect(e.stderr).toMatch(/events\.out\.tfevents\.2\.host: byte \d+: TFRecord (data|length) CRC mismatch/);
  });

  it('reads the fixture written by TensorBoard’s own writer against a matching dump', async () => {
    const root = await mkdtemp(join(tmpdir(), 'labs-logaudit-'));
    const dump = join(root, 'dump');
    await mkdir(dump);
    // The fixture logs critic/score/mean 0.25, 0.5, 0.75 and clip ratio 0.125, 0, 1 at steps 1-3.
    const scores: Record<number, number[]> = { 1: [1, 0, 0, 0], 2: [1, 1, 0, 0], 3: [1, 1, 1, 0] };
    for (const [step, s] of Object.entries(scores)) {
      const lines = s.map((score, i) =>
        JSON.stringify({ input: `p${i % 2}`, output: 'x', score, step: Number(step) }),
      );
      await writeFile(join(dump, `${step}.jsonl`), `${lines.join('\n')}\n`);
    }
    const fixture = resolve('test/fixtures/tensorboard/events.out.tfevents.fixture');
    const r = labs(['audit', dump, '--preset', 'verl', '--metrics', fixture, '--json']);
    expect(r.code).toBe(0);
    const record = JSON.parse(r.stdout);
    const rows = record.tables.logged_vs_recomputed as {
      metric: string;
      agrees: boolean | null;
      note: string | null;
    }[];
    expect(rows.filter((x) => x.metric === 'critic/score/mean').map((x) => x.agrees)).toEqual([
      true,
      true,
      true,
    ]);
    // No token lengths in this dump: the length metrics are named as not recomputable.
    expect(rows.filter((x) => x.metric === 'response_length/mean').every((x) => x.agrees === null)).toBe(
      true,
    );
    expect(rows.find((x) => x.metric === 'response_length/clip_ratio')?.note).toContain('no token lengths');
    expect(record.config.metrics_log_formats).toEqual(['tensorboard']);
  });
});

describe('labs audit --metrics options', () => {
  it('parses --length-anatomy (implied by --metrics) and the run settings; refuses bad values', async () => {
    const { parseCli } = await import('../../cli/parse.js');
    const extra = (argv: string[]) => {
      const p = parseCli(argv);
      if (p.command !== 'audit') throw new Error('not audit');
      return p.auditExtra;
    };
    expect(extra(['audit', 'd']).lengthAnatomy).toBe(false);
    expect(extra(['audit', 'd', '--length-anatomy']).lengthAnatomy).toBe(true);
    expect(extra(['audit', 'd', '--metrics', 'tb', '--max-response-length', '512'])).toMatchObject({
      lengthAnatomy: true,
      metricsLog: 'tb',
      maxResponseLength: 512,
      maxCompletionLength: null,
    });
    expect(() => parseCli(['audit', 'd', '--max-completion-length', '0'])).toThrow(
      "--max-completion-length expects an integer >= 1, got '0'",
    );
  });
});
