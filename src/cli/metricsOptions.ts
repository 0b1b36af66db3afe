/**
 * `labs audit` options for the logged-vs-recomputed comparison (src/audit/metricsLog/), declared once
 * here so src/cli/parse.ts only wires them in:
 *  - `--length-anatomy`: add the length anatomy table and plots (implied by --metrics);
 *  - `--metrics PATH`: the run's scalar log, a file or directory (TensorBoard event files, W&B CSV or
 *    history JSONL, prime-rl metrics JSONL, verl file-logger JSONL);
 *  - `--max-response-length N`: verl's `data.max_response_length` (for `response_length/clip_ratio`
 *    and the length anatomy's truncation);
 *  - `--max-completion-length N`: TRL's `max_completion_length` (for `completions/clipped_ratio`).
 */
import type { Command } from 'commander';
import { LabError } from '../core/errors.js';

export interface MetricsCliExtra {
  lengthAnatomy: boolean;
  metricsLog: string | null;
  maxResponseLength: number | null;
  maxCompletionLength: number | null;
}

export function addMetricsOptions(audit: Command): void {
  audit
    .option(
      '--length-anatomy',
      'lengths of correct vs incorrect responses, truncation with zero reward, repetition, entropy (implied by --metrics)',
    )
    .option(
      '--metrics <path>',
      "the run's logged scalars (file or directory) to compare with the recomputed ones",
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
  return {
    lengthAnatomy: Boolean(o.lengthAnatomy) || o.metrics !== undefined,
    metricsLog: o.metrics === undefined ? null : String(o.metrics),
    maxResponseLength: positiveInt(o.maxResponseLength, '--max-response-length'),
    maxCompletionLength: positiveInt(o.maxCompletionLength, '--max-completion-length'),
  };
}
