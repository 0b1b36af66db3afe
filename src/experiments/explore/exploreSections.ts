/**
 * The three sections of the `explore` experiment, each a named phase that runExplore calls in turn:
 * (a) the levers (temperature x entropy coefficient x IS correction), (b) task classes (never vs
 * sometimes solved at init), (c) the curriculum; each trains its arms with the shared trainer,
 * measures them and writes its part of the record. Plus the per-update measures and the notes.
 */
import { type PromptedTask, samplePromptedTask } from '../../envs/promptedArithmetic.js';
import { Rng } from '../../random.js';
import {
  type ExploreEpisode,
  type ExploreLearner,
  expertTranscripts,
  type UpdateTerms,
} from '../../train/exploreLearner.js';
import type { JsonValue, PlotHint } from '../types.js';

import { type WarmStart, warmStartRow } from '../warmStart.js';
import type { ExploreConfig } from './exploreOptions.js';

/** Arm-name fragment of a number: 1.5 -> 1p5. */
const tag = (x: number) => String(x).replace('.', 'p').replace('-', 'm');
const r6 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null);
const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);

/** Training-batch measures of one update. */
export interface Batch {
  success: number;
  validActionRate: number;
  modelTokens: number;
  successes: number;
  entropy: number;
  errors: Record<string, number>;
}

export function measureBatch(rows: readonly ExploreEpisode[], entropy: number): Batch {
  let model = 0;
  let ok = 0;
  let invalid = 0;
  const errors: Record<string, number> = {};
  for (const e of rows) {
    model += e.modelTokens;
    if (e.status === 'success') ok++;
    // a protocol error is exactly one invalid action, and it ends the episode
    if (e.status === 'protocol_error') {
      invalid++;
      const kind = e.errorKind ?? 'unknown';
      errors[kind] = (errors[kind] ?? 0) + 1;
    }
  }
  return {
    success: ok / rows.length,
    validActionRate: model > 0 ? 1 - invalid / model : Number.NaN,
    modelTokens: model,
    successes: ok,
    entropy,
    errors,
  };
}

/** Success at tau = 1 of the fixed evaluation set, per level (index 0 = level 1). */
export function evaluateLevels(
  learner: ExploreLearner,
  evalSet: readonly PromptedTask[][],
  seed: number,
): number[] {
  const root = new Rng(seed);
  const pick = root.fork('explore/eval-policy');
  const noise = root.fork('explore/eval-noise');
  return evalSet.map((tasks) => mean(learner.rollout(tasks, 1, 1, pick, noise).map((e) => e.score)));
}

/** Trains one arm; `draw(u, rng)` gives the update's tasks and their group sizes. */
export type TrainArm = (
  label: string,
  terms: UpdateTerms,
  draw: (u: number, rng: Rng, learner: ExploreLearner) => { tasks: PromptedTask[]; sizes: number[] },
  afterUpdate?: (u: number, learner: ExploreLearner, rows: ExploreEpisode[], sizes: number[]) => void,
) => { learner: ExploreLearner; batches: Batch[] };

/**
 * What each section reads (the config, the fixed evaluation set, the seeded streams, the arm
 * trainer) and the parts of the record it writes (metrics, curves, tables, plots, notes).
 */
export interface SectionState {
  cfg: ExploreConfig;
  seed: number;
  evalSet: PromptedTask[][];
  streams: (label: string) => { tasks: Rng; pick: Rng; noise: Rng };
  newLearner: () => ExploreLearner;
  train: TrainArm;
  uniformTask: (rng: Rng) => PromptedTask;
  baseTerms: UpdateTerms;
  metrics: Record<string, JsonValue>;
  curves: Record<string, number[]>;
  tables: Record<string, Record<string, JsonValue>[]>;
  plots: Record<string, PlotHint>;
  notes: string[];
}

/**
 * The warm start in the record (init=sft): `metrics['pretrain_pass_rate.level_<k>']`, the pretrained
 * policy's success at tau = 1 on the fixed evaluation set before any RL (the same tasks and streams
 * as every later evaluation, so before and after are paired task by task), `tables.warm_start` (the
 * checkpoint and what produced it) and a note.
 */
export function warmStartReport(start: WarmStart, before: readonly number[], state: SectionState): void {
  before.forEach((x, i) => {
    state.metrics[`pretrain_pass_rate.level_${i + 1}`] = r6(x);
  });
  state.tables.warm_start = [warmStartRow(start)];
  state.notes.push(
    `Warm start (init=sft): every arm started from the pretrained checkpoint ${start.checkpoint === '' ? '(not cached)' : start.checkpoint}; pass rate on the fixed evaluation set before RL: ${before.map((x, i) => `level ${i + 1} ${x.toFixed(3)}`).join(', ')}.`,
  );
}

/** Section (a) levers: temperature x entropy coefficient x IS correction. */
export function leversSection(state: SectionState): void {
  const { cfg, seed, evalSet, train, uniformTask, baseTerms } = state;
  const { metrics, curves, tables, plots, notes } = state;
  const G = cfg.group_size;
  const K = cfg.tasks_per_update;
  const rows: Record<string, JsonValue>[] = [];
  const errorRows: Record<string, JsonValue>[] = [];
  for (const tau of cfg.temperatures)
    for (const beta of cfg.entropy_coefs)
      for (const isc of [false, true]) {
        const arm = `tau${tag(tau)}_beta${tag(beta)}_is_${isc ? 'on' : 'off'}`;
        // every arm of the section draws the same tasks (label 'levers'): common random numbers
        const terms = { ...baseTerms, temperature: tau, entropyCoef: beta, isCorrection: isc };
        const { learner, batches } = train('levers', terms, (_u, rng) => ({
          tasks: Array.from({ length: K }, () => uniformTask(rng)),
          sizes: new Array(K).fill(G),
        }));
        const perLevel = evaluateLevels(learner, evalSet, seed);
        const successes = batches.reduce((a, b) => a + b.successes, 0);
        const tokens = batches.reduce((a, b) => a + b.modelTokens, 0);
        const late = batches.slice(-Math.max(1, Math.floor(cfg.updates / 4)));
        const row: Record<string, JsonValue> = {
          arm,
          temperature: tau,
          entropy_coef: beta,
          is_correction: isc ? 'on' : 'off',
          valid_action_rate: r6(mean(batches.map((b) => b.validActionRate))),
          train_success: r6(mean(batches.map((b) => b.success))),
          tokens_per_success: successes > 0 ? r6(tokens / successes) : null,
          entropy: r6(mean(late.map((b) => b.entropy))),
          eval_success: r6(mean(perLevel)),
          eval_success_level_1: r6(perLevel[0] as number),
          eval_success_level_2: r6(perLevel[1] as number),
          eval_success_level_3: r6(perLevel[2] as number),
        };
        rows.push(row);
        for (const key of [
          'valid_action_rate',
          'train_success',
          'tokens_per_success',
          'entropy',
          'eval_success',
        ])
          metrics[`${key}.${arm}`] = row[key] as JsonValue;
        curves[`valid_action_rate.${arm}`] = batches.map((b) => b.validActionRate);
        curves[`train_success.${arm}`] = batches.map((b) => b.success);
        curves[`entropy.${arm}`] = batches.map((b) => b.entropy);
        curves[`tokens_per_success.${arm}`] = batches.map((b) => b.modelTokens / Math.max(1, b.successes));
        const kinds: Record<string, number> = {};
        for (const b of batches)
          for (const [k, n] of Object.entries(b.errors)) kinds[k] = (kinds[k] ?? 0) + n;
        for (const [kind, count] of Object.entries(kinds).sort())
          errorRows.push({
            arm,
            temperature: tau,
            entropy_coef: beta,
            is_correction: isc ? 'on' : 'off',
            kind,
            count,
          });
      }
  tables.levers = rows;
  tables.protocol_errors = errorRows;
  const base =
    rows.find((r) => r.temperature === 1 && r.entropy_coef === 0 && r.is_correction === 'off') ?? rows[0];
  if (base) {
    for (const r of rows) {
      if (r === base) continue;
      for (const key of ['valid_action_rate', 'train_success', 'entropy', 'eval_success']) {
        const a = r[key];
        const b = base[key];
        if (typeof a === 'number' && typeof b === 'number')
          metrics[`${key}.${r.arm}_minus_${base.arm}`] = r6(a - b);
      }
    }
  }
  plots.valid_action_rate = {
    title: 'Valid-action rate by lever arm',
    y: '1 - protocol errors / model tokens',
  };
  plots.tokens_per_success = {
    title: 'Cost per success by lever arm',
    y: 'model tokens / successful sample',
  };
  plots.entropy = { title: 'Policy entropy at tau = 1', y: 'nats per model token' };
  plots.train_success = { title: 'Training success by arm', y: 'fraction of samples' };
  notes.push(leversNote(rows, cfg.policy));
}
/** Section (b) task classes: never vs sometimes solved at init. */
export function taskClassesSection(state: SectionState): void {
  const { cfg, seed, streams, newLearner, train, baseTerms } = state;
  const { metrics, curves, tables, plots, notes } = state;
  const G = cfg.group_size;
  const K = cfg.tasks_per_update;
  const poolRng = new Rng(seed).fork('explore/pool');
  const pool = [1, 2, 3].flatMap((lvl) =>
    Array.from({ length: cfg.pool_per_level }, () => samplePromptedTask(poolRng, cfg.max_operand, lvl, lvl)),
  );
  const passRates = (learner: ExploreLearner, label: string) => {
    const s = streams(label);
    return pool.map((t) =>
      mean(learner.rollout([t], cfg.class_samples, 1, s.pick, s.noise).map((e) => e.score)),
    );
  };
  const init = passRates(newLearner(), 'classes-init');
  const cls = init.map((p) => (p > 0 ? 'sometimes' : 'never'));
  const never = pool.filter((_, i) => cls[i] === 'never');
  const demos = expertTranscripts(
    never.slice(0, cfg.demo_tasks),
    cfg,
    new Rng(seed).fork('explore/demo-noise'),
  );
  const arms: { arm: string; terms: UpdateTerms; factor: number }[] = [
    { arm: 'uniform', terms: baseTerms, factor: 1 },
    { arm: 'more_candidates', terms: baseTerms, factor: cfg.candidate_factor },
    {
      arm: 'temperature_up',
      terms: { ...baseTerms, temperature: cfg.hot_temperature, isCorrection: true },
      factor: 1,
    },
    {
      arm: 'demonstrations',
      terms: { ...baseTerms, demonstrations: demos, sftCoef: cfg.sft_coef },
      factor: 1,
    },
  ];
  const rows: Record<string, JsonValue>[] = [];
  for (const a of arms) {
    const { learner, batches } = train('classes', a.terms, (_u, rng) => {
      const tasks = Array.from({ length: K }, () => pool[rng.int(0, pool.length - 1)] as PromptedTask);
      const sizes = tasks.map((t) => (cls[pool.indexOf(t)] === 'sometimes' ? G * a.factor : G));
      return { tasks, sizes };
    });
    const final = passRates(learner, 'classes-final');
    const tokens = batches.reduce((s, b) => s + b.modelTokens, 0);
    for (const c of ['sometimes', 'never']) {
      const idx = pool.map((_, i) => i).filter((i) => cls[i] === c);
      const row: Record<string, JsonValue> = {
        arm: a.arm,
        class: c,
        tasks: idx.length,
        init_pass_rate: r6(mean(idx.map((i) => init[i] as number))),
        final_pass_rate: r6(mean(idx.map((i) => final[i] as number))),
        solved_tasks: idx.filter((i) => (final[i] as number) > 0).length,
        train_model_tokens: tokens,
      };
      rows.push(row);
      metrics[`final_pass_rate_${c}.${a.arm}`] = row.final_pass_rate as JsonValue;
    }
    curves[`classes_train_success.${a.arm}`] = batches.map((b) => b.success);
  }
  for (const a of arms.slice(1))
    for (const c of ['sometimes', 'never']) {
      const x = metrics[`final_pass_rate_${c}.${a.arm}`];
      const y = metrics[`final_pass_rate_${c}.uniform`];
      if (typeof x === 'number' && typeof y === 'number')
        metrics[`final_pass_rate_${c}.${a.arm}_minus_uniform`] = r6(x - y);
    }
  tables.task_classes = rows;
  plots.classes_train_success = { title: 'Task-class arms: training success', y: 'fraction of samples' };
  notes.push(classesNote(rows, never.length, pool.length, demos.length));
}
/** Section (c) curriculum: fixed evaluation set every eval_every updates. */
export function curriculumSection(state: SectionState): void {
  const { cfg, seed, evalSet, train, uniformTask, baseTerms } = state;
  const { metrics, tables, plots, notes } = state;
  const G = cfg.group_size;
  const K = cfg.tasks_per_update;
  const S = cfg.schedule.length;
  const stageOf = (u: number) => Math.min(S - 1, Math.floor((u * S) / cfg.updates));
  const staged = (replay: number) => (u: number, rng: Rng) => {
    const st = stageOf(u);
    const tasks = Array.from({ length: K }, () => {
      const lvl =
        st > 0 && rng.next() < replay
          ? (cfg.schedule[rng.int(0, st - 1)] as number)
          : (cfg.schedule[st] as number);
      return samplePromptedTask(rng, cfg.max_operand, lvl, lvl);
    });
    return { tasks, sizes: new Array(K).fill(G) };
  };
  const hvf = hardestVarianceFirst(cfg, uniformTask);
  const arms: {
    arm: string;
    replay: number | null;
    draw: Parameters<typeof train>[2];
    after?: Parameters<typeof train>[3];
  }[] = [
    {
      arm: 'uniform',
      replay: null,
      draw: (_u, rng) => ({
        tasks: Array.from({ length: K }, () => uniformTask(rng)),
        sizes: new Array(K).fill(G),
      }),
    },
    { arm: 'staged', replay: 0, draw: staged(0) },
    ...cfg.replay_fractions.map((r) => ({ arm: `staged_replay_${tag(r)}`, replay: r, draw: staged(r) })),
    { arm: 'hardest_variance_first', replay: null, draw: hvf.draw, after: hvf.after },
  ];
  const rows: Record<string, JsonValue>[] = [];
  const hard = Math.max(...cfg.schedule);
  for (const a of arms) {
    const evals: { update: number; levels: number[] }[] = [];
    let initLevels: number[] = [];
    const { learner } = train(
      'curriculum',
      baseTerms,
      (u, rng, l) => {
        if (u === 0) {
          initLevels = evaluateLevels(l, evalSet, seed);
          evals.push({ update: 0, levels: initLevels });
        }
        return a.draw(u, rng, l);
      },
      (u, l, rws, sizes) => {
        a.after?.(u, l, rws, sizes);
        if ((u + 1) % cfg.eval_every === 0 && u + 1 < cfg.updates)
          evals.push({ update: u + 1, levels: evaluateLevels(l, evalSet, seed) });
      },
    );
    evals.push({ update: cfg.updates, levels: evaluateLevels(learner, evalSet, seed) });
    const easy = evals.map((e) => e.levels[0] as number);
    const finalLv = evals[evals.length - 1]?.levels ?? [];
    const row: Record<string, JsonValue> = {
      arm: a.arm,
      replay: a.replay,
      forgetting_easy: r6(Math.max(...easy) - (easy[easy.length - 1] as number)),
      gain_hard: r6((finalLv[hard - 1] as number) - (initLevels[hard - 1] as number)),
      eval_auc: r6(mean(evals.map((e) => mean(e.levels)))),
      final_level_1: r6(finalLv[0] as number),
      final_level_2: r6(finalLv[1] as number),
      final_level_3: r6(finalLv[2] as number),
    };
    rows.push(row);
    for (const key of CURRICULUM_METRICS) metrics[`${key}.${a.arm}`] = row[key] as JsonValue;
    tables[`curriculum_eval_${a.arm}`] = evals.map((e) => ({
      update: e.update,
      level_1: r6(e.levels[0] as number),
      level_2: r6(e.levels[1] as number),
      level_3: r6(e.levels[2] as number),
    }));
    plots[`curriculum_eval_${a.arm}`] = {
      title: `Curriculum ${a.arm}: fixed-set success per level`,
      y: 'success at tau = 1',
      table: `curriculum_eval_${a.arm}`,
      xField: 'update',
      yFields: ['level_1', 'level_2', 'level_3'],
    };
    // clear the hvf state for a later run of the same closure (there is none; kept explicit)
  }
  for (const r of rows.slice(1))
    for (const key of CURRICULUM_METRICS) {
      const x = r[key];
      const y = rows[0]?.[key];
      if (typeof x === 'number' && typeof y === 'number')
        metrics[`${key}.${r.arm}_minus_uniform`] = r6(x - y);
    }
  tables.curriculum = rows;
  notes.push(curriculumNote(rows, cfg.policy));
}

/**
 * The curriculum measures each arm reports as metrics (and as arm − uniform): forgetting proper
 * (peak − final level-1 success), the gain on the hardest level, the area under the evaluation curve,
 * and the final success per level (1, 2, 3), which tell a gap in final easy-task success (a staged
 * arm that never learned level 1 as well) from forgetting.
 */
const CURRICULUM_METRICS = [
  'forgetting_easy',
  'gain_hard',
  'eval_auc',
  'final_level_1',
  'final_level_2',
  'final_level_3',
] as const;

const f3 = (x: JsonValue | undefined) => (typeof x === 'number' ? x.toFixed(3) : 'n/a');

/** What the levers section shows, from the measured rows. */
function leversNote(rows: Record<string, JsonValue>[], policy: string): string {
  const at = (tau: number, beta: number, is: string) =>
    rows.find((r) => r.temperature === tau && r.entropy_coef === beta && r.is_correction === is);
  const taus = [...new Set(rows.map((r) => r.temperature as number))].sort((a, b) => a - b);
  const betas = [...new Set(rows.map((r) => r.entropy_coef as number))].sort((a, b) => a - b);
  const tLo = taus[0] as number;
  const tHi = taus[taus.length - 1] as number;
  const bHi = betas[betas.length - 1] as number;
  const lo = at(tLo, 0, 'off') ?? rows[0];
  const hi = at(tHi, 0, 'off') ?? rows[0];
  const hiIs = at(tHi, 0, 'on') ?? rows[0];
  const base = at(1, 0, 'off') ?? rows[0];
  const ent = at(1, bHi, 'off') ?? rows[0];
  return (
    `(a) levers, ${policy} policy: temperature ${tLo} -> ${tHi} (no entropy bonus, no IS) moves the training valid-action rate ${f3(lo?.valid_action_rate)} -> ${f3(hi?.valid_action_rate)}, ` +
    `cost ${f3(lo?.tokens_per_success)} -> ${f3(hi?.tokens_per_success)} model tokens per success, and tau = 1 eval success ${f3(lo?.eval_success)} -> ${f3(hi?.eval_success)} ` +
    `(IS-corrected at tau ${tHi}: ${f3(hiIs?.eval_success)}). The entropy bonus ${bHi} at tau 1 keeps the tau = 1 entropy at ${f3(ent?.entropy)} vs ${f3(base?.entropy)} ` +
    `(late-training mean, nats/token) with eval success ${f3(ent?.eval_success)} vs ${f3(base?.eval_success)}.`
  );
}

function classesNote(rows: Record<string, JsonValue>[], never: number, total: number, demos: number): string {
  const get = (arm: string, c: string) => rows.find((r) => r.arm === arm && r.class === c);
  const parts = ['uniform', 'more_candidates', 'temperature_up', 'demonstrations'].map(
    (a) => `${a} ${f3(get(a, 'sometimes')?.final_pass_rate)} / ${f3(get(a, 'never')?.final_pass_rate)}`,
  );
  return `(b) task classes: ${never} of ${total} pool tasks were never solved at init (${demos} given an expert transcript). Final pass rate sometimes / never: ${parts.join('; ')}.`;
}

function curriculumNote(rows: Record<string, JsonValue>[], policy: string): string {
  const parts = rows.map(
    (r) => `${r.arm} forgetting ${f3(r.forgetting_easy)}, gain ${f3(r.gain_hard)}, AUC ${f3(r.eval_auc)}`,
  );
  return `(c) curriculum, ${policy} policy (forgetting needs shared parameters; the table is the control): ${parts.join('; ')}.`;
}

/**
 * The hardest-variance-first task sampler of the curriculum: per level, an EMA (0.5) of the fraction
 * of mixed groups; each task is drawn from the hardest level whose EMA is >= 0.2, or uniformly when
 * none is. `after` updates the EMAs from an update's groups.
 */
function hardestVarianceFirst(cfg: ExploreConfig, uniformTask: (rng: Rng) => PromptedTask) {
  const G = cfg.group_size;
  const K = cfg.tasks_per_update;
  const mixed = [1, 1, 1];
  const draw = (_u: number, rng: Rng) => {
    let lvl = 0;
    for (let l = 3; l >= 1; l--)
      if ((mixed[l - 1] as number) >= 0.2) {
        lvl = l;
        break;
      }
    const tasks = Array.from({ length: K }, () =>
      lvl > 0 ? samplePromptedTask(rng, cfg.max_operand, lvl, lvl) : uniformTask(rng),
    );
    return { tasks, sizes: new Array(K).fill(G) };
  };
  const after = (_u: number, _l: ExploreLearner, rows: ExploreEpisode[], sizes: number[]) => {
    const seen = [0, 0, 0];
    const mix = [0, 0, 0];
    let o = 0;
    for (const s of sizes) {
      const grp = rows.slice(o, o + s);
      o += s;
      const lvl = (grp[0]?.level ?? 1) - 1;
      const k = grp.filter((e) => e.score > 0).length;
      seen[lvl] = (seen[lvl] as number) + 1;
      if (k > 0 && k < s) mix[lvl] = (mix[lvl] as number) + 1;
    }
    for (let l = 0; l < 3; l++)
      if ((seen[l] as number) > 0)
        mixed[l] = 0.5 * (mixed[l] as number) + 0.5 * ((mix[l] as number) / (seen[l] as number));
  };
  return { draw, after };
}
