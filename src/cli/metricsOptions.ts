/**
 * `labs audit` options for the logged-vs-recomputed comparison (src/audit/metricsLog/), declared once
 * here (commandOptions.ts says what an entry declares) and placed into AUDIT_OPTIONS:
 *  - `--watch`, `--watch-interval S`: follow a directory a running job is writing (with `--html`, a
 *    live page rewritten as steps arrive);
 *  - `--length-anatomy`: add the length anatomy table and plots (implied by --metrics);
 *  - `--metrics PATH`: the run's scalar log, a file or directory (TensorBoard event files, W&B CSV or
 *    history JSONL, prime-rl metrics JSONL, verl file-logger JSONL); with `--preset prime-rl` (the
 *    token export) it compares the per-env entropy and mismatch_kl means (primeEnvMeans.ts);
 *  - `--max-response-length N`: verl's `data.max_response_length` (for `response_length/clip_ratio`
 *    and the length anatomy's truncation);
 *  - `--max-completion-length N`: TRL's `max_completion_length` (for `completions/clipped_ratio`).
 */
import { AUDIT_PRESETS } from '../audit/presets.js';
import { flagOption, numberOption, type OptionValues, textOption } from './commandOptions.js';

/** The presets that audit rewards (not token-level dumps). */
export const REWARD_PRESETS: readonly string[] = Object.keys(AUDIT_PRESETS);

/** Length anatomy and --watch read reward dumps only (today). */
export const REWARD_ONLY = {
  presets: REWARD_PRESETS,
  refusal: (preset: string) =>
    `applies to the reward presets (${REWARD_PRESETS.join(', ')}), not the token-level '${preset}'`,
};

export const METRICS_OPTIONS = {
  watch: flagOption(
    '--watch',
    'follow a directory a running job is writing (with --html: a live page as steps arrive); Ctrl-C writes the final audit',
    REWARD_ONLY,
  ),
  watchInterval: numberOption(
    '--watch-interval',
    's',
    'with --watch: seconds between polls of the directory',
    {
      default: 1,
      min: 0.05,
      max: 3600,
      noun: 'seconds',
      within: '--watch',
      ...REWARD_ONLY,
    },
  ),
  lengthAnatomy: flagOption(
    '--length-anatomy',
    'lengths of correct vs incorrect responses, truncation with zero reward, repetition, entropy (implied by --metrics)',
    REWARD_ONLY,
  ),
  metrics: textOption(
    '--metrics',
    'path',
    "the run's logged scalars (file or directory) to compare with the recomputed ones (reward presets; prime-rl: per-env entropy and mismatch_kl)",
    {
      nonEmpty: 'expects a file or directory',
      // the logged-vs-recomputed comparison also reads prime-rl's token export (its per-env
      // entropy and mismatch_kl means)
      presets: [...REWARD_PRESETS, 'prime-rl'],
      refusal: (preset) =>
        `applies to the reward presets (${REWARD_PRESETS.join(', ')}) and prime-rl, not the token-level '${preset}'`,
    },
  ),
  maxResponseLength: numberOption(
    '--max-response-length',
    'n',
    "verl's data.max_response_length (clip ratio; truncation)",
    { integer: true, min: 1, ...REWARD_ONLY },
  ),
  maxCompletionLength: numberOption(
    '--max-completion-length',
    'n',
    "TRL's max_completion_length (clipped ratio; truncation)",
    { integer: true, min: 1, ...REWARD_ONLY },
  ),
} as const;

export interface MetricsCliExtra {
  /** `--watch`: follow the directory while a job writes it (src/cli/commands/auditWatch.ts). */
  watch: boolean;
  /** `--watch-interval S`: seconds between polls (default 1). */
  watchInterval: number;
  lengthAnatomy: boolean;
  metricsLog: string | null;
  maxResponseLength: number | null;
  maxCompletionLength: number | null;
}

/** The comparison's options as the audit takes them (`--metrics` implies `--length-anatomy`). */
export function metricsExtraOf(o: OptionValues<typeof METRICS_OPTIONS>): MetricsCliExtra {
  return {
    watch: o.watch,
    watchInterval: o.watchInterval,
    lengthAnatomy: o.lengthAnatomy || o.metrics !== null,
    metricsLog: o.metrics,
    maxResponseLength: o.maxResponseLength,
    maxCompletionLength: o.maxCompletionLength,
  };
}
