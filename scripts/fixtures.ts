/**
 * `npm run fixtures`: regenerates the regression fixture records, one per experiment, that
 * `npm test` compares (test/records.test.ts). Run it only after a deliberate change of results
 * (a new default, a fixed bug), and say in the commit which numbers moved and why.
 *
 *   npm run fixtures                 # every experiment
 *   npm run fixtures -- agent mask   # some
 *
 * Location: test/fixtures/records/<experiment>.json (agent, rollout, advantage, mask, aggregation,
 * truncation, saturation, clip, filter). Format (JSON, `format: 1`):
 *   experiment  name, as `labs run --experiment`
 *   tolerance   { relative, absolute }: numbers match when |a - b| <= absolute + relative x max(|a|, |b|)
 *   defaults    every option's default (the config `labs run` uses with no --set); compared exactly
 *   overrides   the small config: options set on top of the defaults (short run, small evaluation)
 *   seeds       the seeds run
 *   runs        per seed: { seed, metrics, tables } exactly as in the RunRecord of
 *               `labs run --experiment <experiment> --seed <seed> --set k=v ... --json`
 *               for the overrides (non-finite numbers written as the strings 'NaN', 'Infinity')
 * Curves, notes and timing are not stored.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonValue } from '../src/experiments/types.js';
import { toJson } from '../src/report/records.js';
import { buildFixture, FIXTURE_DIR } from '../test/support/fixtureRecords.js';

/** The small config of each experiment: short enough that all six compare in seconds. */
const SMALL: Record<string, { overrides: Record<string, JsonValue>; seeds: number[] }> = {
  agent: { overrides: { updates: 20, eval_tasks: 100 }, seeds: [1, 2] },
  rollout: { overrides: { updates: 12, eval_tasks: 50 }, seeds: [1, 2] },
  advantage: { overrides: {}, seeds: [1, 2] },
  mask: { overrides: { updates: 12, eval_tasks: 50 }, seeds: [1, 2] },
  aggregation: { overrides: { updates: 12, eval_tasks: 50 }, seeds: [1, 2] },
  truncation: { overrides: { updates: 12, eval_tasks: 50 }, seeds: [1, 2] },
  saturation: {
    overrides: { warmup_updates: 80, updates: 6, tasks_per_update: 8, eval_tasks: 50, robust_replays: 4 },
    seeds: [1, 2],
  },
  clip: {
    overrides: {
      clip_ratios: [0.2],
      ppo_epochs: [1, 4],
      mini_batches: [2],
      dual_clip: 'on',
      optimizers: ['adam'],
      adam_lrs: [0.05],
      batches: 1,
      warmup_updates: 8,
      ref_updates: 4,
      kl_loss_coefs: [0.3],
      eval_tasks: 30,
    },
    seeds: [1, 2],
  },
  filter: { overrides: { updates: 12, groups_per_update: 8, group_size: 4, eval_tasks: 50 }, seeds: [1, 2] },
  // from scratch (no pretraining), three arms, one dose row besides the exact engine
  mismatch: {
    overrides: {
      init: 'scratch',
      updates: 2,
      tasks_per_update: 2,
      group_size: 4,
      eval_tasks: 10,
      eval_every: 1,
      arms: 'none,token_tis,geo',
      engine_precision: 'fp8',
      top_p: 0.9,
      dose_precisions: 'fp8',
      dose_top_p: '',
      dose_lags: '',
    },
    seeds: [1],
  },
  explore: {
    overrides: {
      updates: 4,
      tasks_per_update: 3,
      group_size: 4,
      eval_per_level: 6,
      pool_per_level: 2,
      class_samples: 6,
      eval_every: 2,
      temperatures: [1, 2],
      entropy_coefs: [0, 0.01],
      replay_fractions: [0.3],
    },
    seeds: [1],
  },
};

const wanted = process.argv.slice(2);
const names = wanted.length ? wanted : Object.keys(SMALL);
mkdirSync(FIXTURE_DIR, { recursive: true });
for (const name of names) {
  const small = SMALL[name];
  if (!small) {
    process.stderr.write(`fixtures: unknown experiment '${name}'; known: ${Object.keys(SMALL).join(', ')}\n`);
    process.exit(2);
  }
  const start = performance.now();
  const fixture = await buildFixture(name, small.overrides, small.seeds);
  const path = join(FIXTURE_DIR, `${name}.json`);
  writeFileSync(path, `${toJson(fixture)}\n`);
  process.stdout.write(
    `${path}: ${small.seeds.length} runs in ${(performance.now() - start).toFixed(0)} ms\n`,
  );
}
