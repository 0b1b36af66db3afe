/**
 * `labs audit` options for the logged-vs-recomputed comparison (src/audit/metricsLog/), declared once
 * here so src/cli/parse.ts only wires them in:
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
import type { Command } from 'commander';
import { LabError } from '../core/errors.js';

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

export function addMetricsOptions(audit: Command): void {
  audit
    .option(
      '--watch',
      'follow a directory a running job is writing (with --html: a live page as steps arrive); Ctrl-C writes the final audit',
    )
    .option('--watch-interval <s>', 'with --watch: seconds between polls of the directory', '1')
    .option(
      '--length-anatomy',
      'lengths of correct vs incorrect responses, truncation with zero reward, repetition, entropy (implied by --metrics)',
    )
    .option(
      '--metrics <path>',
      "the run's logged scalars (file or directory) to compare with the recomputed ones (reward presets; prime-rl: per-env entropy and mismatch_kl)",
    )
    .option('--max-response-length <n>', "verl's data.max_response_length (clip ratio; truncation)")
    .option('--max-completion-length <n>', "TRL's max_completion_length (clipped ratio; truncation)");
}

function positiveInt(v: unknown, flag: string): number | null {
  if (v === undefined) return null;
  const text = String(v).trim();
  const n = text === '' ? Number.NaN : Number(text);
  if (!Number.isInteger(n) || n < 1) {
    throw new LabError('BAD_CLI', `${flag} expects an integer >= 1, got '${String(v)}'`, {
      details: { field: flag },
    });
  }
  return n;
}

export function metricsExtraOf(o: Record<string, unknown>): MetricsCliExtra {
  if (o.metrics !== undefined && String(o.metrics).trim() === '') {
    throw new LabError('BAD_CLI', '--metrics expects a file or directory', {
      details: { field: '--metrics' },
    });
  }
  const interval = Number(String(o.watchInterval ?? '1').trim() || Number.NaN);
  if (!Number.isFinite(interval) || interval < 0.05 || interval > 3600) {
    throw new LabError(
      'BAD_CLI',
      `--watch-interval expects seconds in [0.05, 3600], got '${String(o.watchInterval)}'`,
      {
        details: { field: '--watch-interval' },
      },
    );
  }
  return {
    watch: Boolean(o.watch),
    watchInterval: interval,
    lengthAnatomy: Boolean(o.lengthAnatomy) || o.metrics !== undefined,
    metricsLog: o.metrics === undefined ? null : String(o.metrics),
    maxResponseLength: positiveInt(o.maxResponseLength, '--max-response-length'),
    maxCompletionLength: positiveInt(o.maxCompletionLength, '--max-completion-length'),
  };
}
