/**
 * The `labs audit` options of token-level dumps (`--preset nemo-rl | prime-rl | generic-tokens`)
 * and `--html`, declared once here so src/cli/parse.ts only wires them in:
 *  - `--what-if SPEC` (repeatable): a rollout correction in the framework's own config names, e.g.
 *    `rollout_is=token,rollout_is_threshold=2.0` (src/audit/tokens/whatIf.ts).
 *  - `--trainer-logprobs COL`, `--rollout-logprobs COL`, `--loss-mask COL` (generic-tokens; step and
 *    task with `--col-step`, `--col-task`).
 *  - `--prob-bins E,E,...`: rollout-probability bin edges, ascending from 0 to 1.
 *  - `--html FILE`: write the audit's HTML page directly (any preset).
 */
import type { Command } from 'commander';
import { isTokenPreset } from '../audit/tokens/presetNames.js';
import { LabError } from '../core/errors.js';

export interface TokenCliExtra {
  whatIf: string[];
  columns: { trainer?: string; rollout?: string; mask?: string; step?: string; task?: string };
  probEdges: number[] | null;
  byRound: boolean;
  html: string | null;
}

export function addTokenAuditOptions(audit: Command): void {
  audit
    .option(
      '--what-if <spec>',
      "token presets: a correction in its framework's config names, e.g. rollout_is=token,rollout_is_threshold=2.0 (repeatable)",
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .option(
      '--trainer-logprobs <column>',
      'generic-tokens: per-token trainer log-probs (default trainer_logprobs)',
    )
    .option(
      '--rollout-logprobs <column>',
      'generic-tokens: per-token inference log-probs (default rollout_logprobs)',
    )
    .option('--loss-mask <column>', 'generic-tokens: per-token 0/1 loss mask (default loss_mask)')
    .option(
      '--prob-bins <edges>',
      'token presets: rollout-probability bin edges (default 0,0.01,0.1,0.5,0.9,1)',
    )
    .option(
      '--by-round',
      'token presets: also the per-round table (a round = a run of consecutive loss tokens)',
    )
    .option('--html <file>', 'also write the audit as a self-contained HTML page');
}

function cliError(flag: string, message: string): LabError {
  return new LabError('BAD_CLI', `${flag} ${message}`, { details: { field: flag } });
}

export function tokenAuditOf(o: Record<string, unknown>, columns: Record<string, string>): TokenCliExtra {
  const token = isTokenPreset(String(o.preset));
  const whatIf = Array.isArray(o.whatIf) ? (o.whatIf as string[]) : [];
  for (const flag of [
    'whatIf',
    'trainerLogprobs',
    'rolloutLogprobs',
    'lossMask',
    'probBins',
    'byRound',
  ] as const) {
    if (o[flag] !== undefined && !token) {
      const name = `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw cliError(
        name,
        `applies to token-level presets (nemo-rl, prime-rl, generic-tokens), not '${String(o.preset)}'`,
      );
    }
  }
  // Length anatomy and --watch read reward dumps only (today); the logged-vs-recomputed comparison
  // also reads prime-rl's token export (its per-env entropy and mismatch_kl means).
  for (const flag of ['metrics', 'lengthAnatomy', 'watch'] as const) {
    if (o[flag] !== undefined && token && !(flag === 'metrics' && o.preset === 'prime-rl')) {
      const name = `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw cliError(
        name,
        `applies to the reward presets (verl, trl, generic)${flag === 'metrics' ? ' and prime-rl' : ''}, not the token-level '${String(o.preset)}'`,
      );
    }
  }
  for (const flag of ['trainerLogprobs', 'rolloutLogprobs', 'lossMask'] as const) {
    if (o[flag] !== undefined && o.preset !== 'generic-tokens') {
      const name = `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw cliError(
        name,
        `names a column of --preset generic-tokens; '${String(o.preset)}' has fixed field names`,
      );
    }
  }
  let probEdges: number[] | null = null;
  if (o.probBins !== undefined) {
    probEdges = String(o.probBins)
      .split(',')
      .map((t) => (t.trim() === '' ? Number.NaN : Number(t)));
    if (!probEdges.every(Number.isFinite))
      throw cliError('--prob-bins', `expects comma-separated numbers, got '${String(o.probBins)}'`);
  }
  const cols: TokenCliExtra['columns'] = {};
  if (typeof o.trainerLogprobs === 'string') cols.trainer = o.trainerLogprobs;
  if (typeof o.rolloutLogprobs === 'string') cols.rollout = o.rolloutLogprobs;
  if (typeof o.lossMask === 'string') cols.mask = o.lossMask;
  if (token && columns.step !== undefined) cols.step = columns.step;
  if (token && columns.task !== undefined) cols.task = columns.task;
  return {
    whatIf,
    columns: cols,
    probEdges,
    byRound: o.byRound === true,
    html: typeof o.html === 'string' ? o.html : null,
  };
}
