/**
 * The `labs audit` options of token-level dumps (`--preset nemo-rl | prime-rl | generic-tokens |
 * areal`) and `--html`, declared once here (commandOptions.ts says what an entry declares) and
 * placed into AUDIT_OPTIONS:
 *  - `--what-if SPEC` (repeatable): a rollout correction in the framework's own config names, e.g.
 *    `rollout_is=token,rollout_is_threshold=2.0` (src/audit/tokens/whatIf.ts).
 *  - `--trainer-logprobs COL`, `--rollout-logprobs COL`, `--loss-mask COL` (generic-tokens; step and
 *    task with `--col-step`, `--col-task`).
 *  - `--prob-bins E,E,...`: rollout-probability bin edges, ascending from 0 to 1.
 *  - `--html FILE`: write the audit's HTML page directly (any preset).
 */
import { isTokenPreset, TOKEN_PRESETS } from '../audit/tokens/presetNames.js';
import {
  flagOption,
  listOption,
  numberListOption,
  type OptionValues,
  textOption,
  withHelp,
} from './commandOptions.js';
import { HTML_OPTION } from './sharedOptions.js';

const TOKEN_ONLY = {
  presets: TOKEN_PRESETS,
  // every token option shapes the numbers: the page's rerun line gives it again
  rerun: true,
  refusal: (preset: string) =>
    `applies to token-level presets (nemo-rl, prime-rl, generic-tokens), not '${preset}'`,
};

/** A column of generic-tokens: refused with the reward presets as every token flag, with the others as fixed. */
const GENERIC_TOKENS_ONLY = {
  presets: ['generic-tokens'],
  rerun: true,
  refusal: (preset: string) =>
    isTokenPreset(preset)
      ? `names a column of --preset generic-tokens; '${preset}' has fixed field names`
      : TOKEN_ONLY.refusal(preset),
};

export const TOKEN_OPTIONS = {
  whatIf: listOption(
    '--what-if',
    'spec',
    "token presets: a correction in its framework's config names, e.g. rollout_is=token,rollout_is_threshold=2.0 (repeatable)",
    TOKEN_ONLY,
  ),
  trainerLogprobs: textOption(
    '--trainer-logprobs',
    'column',
    'generic-tokens: per-token trainer log-probs (default trainer_logprobs)',
    GENERIC_TOKENS_ONLY,
  ),
  rolloutLogprobs: textOption(
    '--rollout-logprobs',
    'column',
    'generic-tokens: per-token inference log-probs (default rollout_logprobs)',
    GENERIC_TOKENS_ONLY,
  ),
  lossMask: textOption(
    '--loss-mask',
    'column',
    'generic-tokens: per-token 0/1 loss mask (default loss_mask)',
    GENERIC_TOKENS_ONLY,
  ),
  probBins: numberListOption(
    '--prob-bins',
    'E,...',
    'token presets: rollout-probability bin edges (default 0,0.01,0.1,0.5,0.9,1)',
    'comma-separated numbers',
    TOKEN_ONLY,
  ),
  byRound: flagOption(
    '--by-round',
    'token presets: also the per-round table (a round = a run of consecutive loss tokens)',
    TOKEN_ONLY,
  ),
  html: withHelp(HTML_OPTION, 'also write the audit as a self-contained HTML page'),
} as const;

export interface TokenCliExtra {
  whatIf: string[];
  columns: { trainer?: string; rollout?: string; mask?: string; step?: string; task?: string };
  probEdges: number[] | null;
  byRound: boolean;
  html: string | null;
}

/** The token audit's options as it takes them; `columns` are the `--col-<name>` given (step and task apply). */
export function tokenAuditOf(
  o: OptionValues<typeof TOKEN_OPTIONS>,
  preset: string,
  columns: Record<string, string>,
): TokenCliExtra {
  const token = isTokenPreset(preset);
  const cols: TokenCliExtra['columns'] = {};
  if (o.trainerLogprobs !== null) cols.trainer = o.trainerLogprobs;
  if (o.rolloutLogprobs !== null) cols.rollout = o.rolloutLogprobs;
  if (o.lossMask !== null) cols.mask = o.lossMask;
  if (token && columns.step !== undefined) cols.step = columns.step;
  if (token && columns.task !== undefined) cols.task = columns.task;
  return { whatIf: o.whatIf, columns: cols, probEdges: o.probBins, byRound: o.byRound, html: o.html };
}
