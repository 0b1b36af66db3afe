/**
 * `labs run --experiment explore`: exploration levers on the prompted env (tasks of 1, 2 or 3 chained
 * tool calls), for the GRU sequence policy or the tabular one (`--set policy=`), in three sections:
 *
 * (a) levers: sampling temperature x entropy bonus x IS correction. The temperature changes the
 *     sampling distribution only; the entropy bonus changes the objective (verl `entropy_coeff`). The
 *     update trains the tau = 1 policy; `is_correction=on` multiplies the advantages by the core's
 *     truncated token IS weights min(pi_1 / pi_tau, 2), `off` ignores the mismatch (exploreLearner.ts).
 *     Measured: valid-action rate (protocol errors by kind), train success, model tokens per success,
 *     the tau = 1 entropy, and success at tau = 1 on a fixed evaluation set per level.
 * (b) task classes: a pool of tasks is classified at init by the initial policy's measured pass rate
 *     (never: 0 of class_samples; sometimes: > 0). Arms: uniform; more candidates (group size x
 *     candidate_factor for sometimes-solved tasks); temperature up (hot_temperature, IS-corrected);
 *     demonstrations (a supervised NLL term, sft_coef, on expert transcripts of never-solved tasks).
 * (c) curriculum: a fixed evaluation set over all levels every eval_every updates. Arms: uniform;
 *     staged (the schedule's levels in equal blocks of updates) without replay and with each replay
 *     fraction; hardest-variance-first (the hardest level whose recent groups were mixed).
 *
 * With `policy=neural --set init=sft` every arm starts from the supervised warm start (warmStart.ts;
 * the token lab's pretraining at the same seed, so its cached checkpoint is shared), and the record
 * has the pretrained pass rate per level on the fixed evaluation set.
 *
 * Reads top to bottom: config, setup, the three sections (each: arms, loop, measurements), record.
 */
import { type PromptedTask, samplePromptedTask } from '../../envs/promptedArithmetic.js';
import { Rng } from '../../random.js';
import {
  createExploreLearner,
  type ExploreEpisode,
  type ExploreLearner,
  type UpdateTerms,
} from '../../train/exploreLearner.js';
import { groupLabelsOfSizes } from '../../train/rollout.js';
import { startRecord } from '../record.js';
import type { Experiment, JsonValue, PlotHint, RunContext, RunRecord } from '../types.js';
import { warmStart } from '../warmStart.js';
import { EXPLORE_OPTIONS, type ExploreConfig, type Section } from './exploreOptions.js';
import {
  type Batch,
  curriculumSection,
  evaluateLevels,
  leversSection,
  measureBatch,
  type SectionState,
  taskClassesSection,
  warmStartReport,
} from './exploreSections.js';

export { EXPLORE_OPTIONS, type ExploreConfig } from './exploreOptions.js';

function runExplore(cfg: ExploreConfig, ctx: RunContext): RunRecord {
  const record = startRecord('explore', cfg, ctx.seed);
  const seed = ctx.seed;
  const sections = new Set<Section>(cfg.sections);
  const baseTerms: UpdateTerms = {
    temperature: 1,
    entropyCoef: 0,
    isCorrection: false,
    lossAggMode: cfg.loss_agg_mode,
    demonstrations: [],
    sftCoef: 0,
  };
  // --- setup: the fixed evaluation set (per level) every arm and section is measured on
  const evalRng = new Rng(seed).fork('explore/eval-tasks');
  const evalSet = [1, 2, 3].map((lvl) =>
    Array.from({ length: cfg.eval_per_level }, () => samplePromptedTask(evalRng, cfg.max_operand, lvl, lvl)),
  );
  // init=sft: every arm starts from the warm start's parameters (pretrained once per seed, cached)
  const start = warmStart({ ...cfg, max_level: 3 }, seed, ctx.onInfo);
  const newLearner = () =>
    createExploreLearner(cfg, new Rng(seed).fork('explore/policy-init'), start?.params);
  const streams = (label: string) => {
    const root = new Rng(seed);
    return {
      tasks: root.fork(`explore/${label}/tasks`),
      pick: root.fork(`explore/${label}/policy`),
      noise: root.fork(`explore/${label}/noise`),
    };
  };
  const metrics: Record<string, JsonValue> = {};
  const curves: Record<string, number[]> = { update: Array.from({ length: cfg.updates }, (_, u) => u + 1) };
  const tables: Record<string, Record<string, JsonValue>[]> = {};
  const plots: Record<string, PlotHint> = {};
  const notes: string[] = [];
  let progressDone = 0;
  const armsTotal =
    (sections.has('levers') ? cfg.temperatures.length * cfg.entropy_coefs.length * 2 : 0) +
    (sections.has('task_classes') ? 4 : 0) +
    (sections.has('curriculum') ? 3 + cfg.replay_fractions.length : 0);
  const tick = () => ctx.onProgress?.(++progressDone, armsTotal * cfg.updates);
  const uniformTask = (rng: Rng) => samplePromptedTask(rng, cfg.max_operand, 1, 3);

  /** Trains one arm; `draw(u, rng)` gives the update's tasks and their group sizes. */
  const train = (
    label: string,
    terms: UpdateTerms,
    draw: (u: number, rng: Rng, learner: ExploreLearner) => { tasks: PromptedTask[]; sizes: number[] },
    afterUpdate?: (u: number, learner: ExploreLearner, rows: ExploreEpisode[], sizes: number[]) => void,
  ) => {
    const learner = newLearner();
    const s = streams(label);
    const batches: Batch[] = [];
    for (let u = 0; u < cfg.updates; u++) {
      const { tasks, sizes } = draw(u, s.tasks, learner);
      const rows = learner.rollout(tasks, sizes, terms.temperature, s.pick, s.noise);
      const { entropy } = learner.update(rows, groupLabelsOfSizes(sizes), terms);
      batches.push(measureBatch(rows, entropy));
      afterUpdate?.(u, learner, rows, sizes);
      tick();
    }
    return { learner, batches };
  };

  const state: SectionState = {
    cfg,
    seed,
    evalSet,
    streams,
    newLearner,
    train,
    uniformTask,
    baseTerms,
    metrics,
    curves,
    tables,
    plots,
    notes,
  };

  if (start) warmStartReport(start, evaluateLevels(newLearner(), evalSet, seed), state);

  // --- (a) levers: temperature x entropy coefficient x IS correction ---------------------------------
  if (sections.has('levers')) leversSection(state);

  // --- (b) task classes: never vs sometimes solved at init ----------------------------------------
  if (sections.has('task_classes')) taskClassesSection(state);

  // --- (c) curriculum: fixed evaluation set every eval_every updates -------------------------------
  if (sections.has('curriculum')) curriculumSection(state);

  if (sections.has('levers') && (cfg.temperatures.length < 4 || cfg.entropy_coefs.length < 4))
    notes.push(
      `Reduced lever grid (${cfg.temperatures.length} temperatures x ${cfg.entropy_coefs.length} entropy coefficients); the issue's full grid, the default, is temperatures=[0.7,1,1.5,2] x entropy_coefs=[0,0.001,0.01,0.05].`,
    );
  return record.finish({
    metrics,
    curves,
    tables,
    notes,
    plots,
  });
}

export const explore: Experiment<typeof EXPLORE_OPTIONS> = {
  name: 'explore',
  summary: 'exploration levers: temperature vs entropy bonus, task classes, curriculum and forgetting',
  options: EXPLORE_OPTIONS,
  run: runExplore,
};
