/**
 * `labs audit --preset nemo-rl` on generated NeMo-RL training-data dumps of about 1M and 10M loss
 * tokens (512 sequences per `train_data_step{N}.jsonl`, a 1000-token prompt, 250-350 response tokens
 * of which a tool-output gap of 20 is not trained on, padding to the step's longest row rounded up to
 * 8, float32 log-probs printed as Python prints them: about 280 bytes of JSON per loss token, as the
 * issue measured on real dumps), generated once under `bench/out/` (ignored by git), against the
 * same-overall-statistics DuckDB SQL bound (bench/audit-tokens-bound.mjs). Both run as child
 * processes under `/usr/bin/time -v` (wall time and peak RSS of the whole process), alternately; the
 * ratio is the median of the per-pair ratios. The rows report the cost per loss token and its
 * extrapolation to 100M, and the peak RSS at both sizes (it should not grow with the dump).
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../src/random.js';
import type { BenchRow } from './run.js';
import { median } from './timing.js';

const SEQS_PER_STEP = 512;
const PROMPT = 1000;
const root = dirname(dirname(fileURLToPath(import.meta.url)));

function writeLine(out: ReturnType<typeof createWriteStream>, line: string): Promise<void> | null {
  return out.write(line) ? null : new Promise((r) => out.once('drain', () => r()));
}

/** Writes the dump (once: a complete dump is reused) and returns its number of loss tokens. */
export async function generate(dir: string, lossTokens: number): Promise<void> {
  if (existsSync(join(dir, 'complete'))) return;
  await mkdir(dir, { recursive: true });
  const rng = new Rng(7);
  let written = 0;
  for (let step = 1; written < lossTokens; step++) {
    const lens = Array.from({ length: SEQS_PER_STEP }, () => 250 + rng.int(0, 100));
    const width = Math.ceil((PROMPT + Math.max(...lens)) / 8) * 8;
    const out = createWriteStream(join(dir, `train_data_step${step}.jsonl`));
    for (let s = 0; s < SEQS_PER_STEP; s++) {
      const len = lens[s] as number;
      const ids: number[] = [];
      const mask: number[] = [];
      const gen: number[] = [];
      const prev: number[] = [];
      for (let t = 0; t < width; t++) {
        const inSeq = t < PROMPT + len;
        const response = t >= PROMPT && inSeq;
        const tool = response && t - PROMPT >= 100 && t - PROMPT < 120;
        const lp = -Math.abs(Math.log(rng.next() + 1e-12)) * (rng.next() < 0.7 ? 0.05 : 1.5);
        const noise = (rng.next() - 0.5) * (lp < -2 ? 0.05 : 0.002);
        ids.push(inSeq ? rng.int(0, 151_000) : 151_643);
        mask.push(response && !tool ? 1 : 0);
        gen.push(response && !tool ? Math.fround(Math.min(lp + noise, 0)) : 0);
        prev.push(t === 0 ? 0 : inSeq ? Math.fround(lp) : -0);
        if (response && !tool) written++;
      }
      const adv = Math.fround(rng.next() - 0.5);
      const line = JSON.stringify({
        agent_ref: [{ type: 'responses_api_agents', name: ['math', 'code', 'search'][s % 3] }],
        content: [['a short prompt', 'a short answer']],
        rewards: [adv > 0 ? 1 : 0],
        filtered_rewards: [adv > 0 ? 1 : 0],
        input_lengths: [PROMPT + len],
        token_ids: [ids],
        token_loss_mask: [mask],
        sample_loss_mask: [1],
        advantages: [ids.map(() => adv)],
        generation_logprobs: [gen],
        prev_logprobs: [prev],
        idx: s,
      });
      const wait = writeLine(out, `${line}\n`);
      if (wait) await wait;
    }
    await new Promise<void>((r) => out.end(() => r()));
  }
  await writeFile(join(dir, 'complete'), String(written));
}

interface Measured {
  ms: number;
  rssMb: number | null;
  cpuS: number;
  stdout: string;
}

function measure(args: string[]): Measured {
  const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
  const t0 = performance.now();
  const out = timeBin
    ? spawnSync(timeBin, ['-v', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 })
    : spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = performance.now() - t0;
  if (out.status !== 0) throw new Error(`bench/audit-tokens: ${args.join(' ')} failed: ${out.stderr}`);
  const rssKb = /Maximum resident set size \(kbytes\): (\d+)/.exec(out.stderr ?? '')?.[1];
  const cpu = (label: string) =>
    Number(new RegExp(`${label} time \\(seconds\\): ([\\d.]+)`).exec(out.stderr ?? '')?.[1] ?? 0);
  return {
    ms,
    rssMb: rssKb ? Number(rssKb) / 1024 : null,
    cpuS: cpu('User') + cpu('System'),
    stdout: out.stdout,
  };
}

function dumpBytes(dir: string): number {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .reduce((a, n) => a + statSync(join(dir, n)).size, 0);
}

export async function run(): Promise<BenchRow[]> {
  const cli = process.env.LABS_AUDIT_CLI ?? join(root, 'dist', 'cli', 'main.js');
  if (!existsSync(cli))
    throw new Error('bench/audit-tokens: run `npm run build` first (needs dist/cli/main.js)');
  const bound = join(root, 'bench', 'audit-tokens-bound.mjs');
  const rows: BenchRow[] = [];
  const sizes = (process.env.LABS_AUDIT_TOKENS ?? '1000000,10000000').split(',').map(Number);
  for (const target of sizes) {
    const dir = join(root, 'bench', 'out', `audit-nemo-rl-${target}`);
    await generate(dir, target);
    const repeats = target > 2_000_000 ? 2 : 3;
    const labs: Measured[] = [];
    const sql: Measured[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const s = measure([bound, dir]);
      const l = measure([
        cli,
        'audit',
        dir,
        '--preset',
        'nemo-rl',
        '--json',
        '--what-if',
        'rollout_is=token,rollout_is_threshold=2.0',
        '--what-if',
        'rollout_rs=seq_mean_k3,rollout_rs_threshold=0.002',
      ]);
      sql.push(s);
      labs.push(l);
      ratios.push(l.ms / s.ms);
    }
    const record = JSON.parse(labs[0]?.stdout ?? '{}') as { metrics: Record<string, number> };
    const sqlOut = JSON.parse(sql[0]?.stdout ?? '[{}]')[0] as Record<string, number>;
    const tokens = record.metrics.loss_tokens as number;
    if (sqlOut.n !== tokens)
      throw new Error(`bench/audit-tokens: SQL counted ${sqlOut.n} loss tokens, labs ${tokens}`);
    const k3 = sqlOut.k3 as number;
    const rel = Math.abs((record.metrics['rollout_corr/k3_kl'] as number) - k3) / Math.abs(k3);
    const peak = (ms: Measured[]) => Math.max(...ms.map((m) => m.rssMb ?? 0));
    const msLabs = median(labs.map((m) => m.ms));
    const nsPerToken = (msLabs * 1e6) / tokens;
    rows.push({
      group: 'audit-tokens',
      name: `labs audit nemo-rl, ${(tokens / 1e6).toFixed(2)}M loss tokens, ${(dumpBytes(dir) / 1e9).toFixed(2)} GB`,
      ms: msLabs,
      floor_ms: median(sql.map((m) => m.ms)),
      ratio: median(ratios),
      note: `floor: same overall statistics in one DuckDB SQL query (k3 agrees to ${rel.toExponential(1)}); peak RSS labs ${peak(labs).toFixed(0)} MB, SQL ${peak(sql).toFixed(0)} MB; ${nsPerToken.toFixed(0)} ns per loss token, so 100M tokens ~ ${((nsPerToken * 1e8) / 1e9 / 60).toFixed(1)} min; CPU s labs ${median(labs.map((m) => m.cpuS)).toFixed(1)}, SQL ${median(sql.map((m) => m.cpuS)).toFixed(1)}; ${repeats} pairs`,
    });
  }
  return rows;
}
