/**
 * Every `labs` command: its description, positional arguments and option table, in the order
 * `labs --help` lists them. parse.ts builds commander's program from this list, and `npm run docs`
 * the synopses of docs/cli.md (`commandSynopsis`, via scripts/docsTables.ts), so the two cannot
 * drift apart. The tables of
 * `run`/`findings` and `audit` are in runOptions.ts and auditOptions.ts; the small ones are here.
 */

import { TOKEN_PRESETS } from '../audit/tokens/presetNames.js';
import { AUDIT_OPTIONS } from './auditOptions.js';
import {
  listOption,
  type OptionTable,
  type OptionValues,
  required,
  synopsisLines,
  synopsisWords,
  textOption,
  withHelp,
} from './commandOptions.js';
import { REWARD_PRESETS } from './metricsOptions.js';
import { FINDINGS_OPTIONS, RUN_OPTIONS } from './runOptions.js';
import { HTML_OPTION, JSON_OPTION, OUT_OPTION } from './sharedOptions.js';

export const LIST_OPTIONS = { json: withHelp(JSON_OPTION, 'print as JSON') } as const;

export const MERGE_OPTIONS = {
  out: required(withHelp(OUT_OPTION, 'write record.json into this directory')),
  json: withHelp(JSON_OPTION, 'print the record as JSON instead of the summary'),
} as const;

export const CONFORMANCE_OPTIONS = { json: JSON_OPTION } as const;

export const REPORT_OPTIONS = {
  html: required(withHelp(HTML_OPTION, 'output HTML file')),
  png: textOption('--png', 'dir', 'also write every plot as a PNG into this directory'),
} as const;

export const COMPARE_OPTIONS = {
  metric: listOption(
    '--metric',
    'key',
    "compare this metric key (repeatable; default: the experiment's headline metrics)",
  ),
  metricA: listOption(
    '--metric-a',
    'key',
    "with --metric-b: A's metric key of a pair compared across records (e.g. two experiments; repeatable, paired by position)",
  ),
  metricB: listOption(
    '--metric-b',
    'key',
    "with --metric-a: B's metric key of the pair (the difference is B's value − A's, by seed)",
  ),
  json: withHelp(JSON_OPTION, 'print the comparison as JSON'),
  html: withHelp(HTML_OPTION, 'also draw the differences in an HTML page'),
} as const;

export type MergeValues = OptionValues<typeof MERGE_OPTIONS>;
export type ReportValues = OptionValues<typeof REPORT_OPTIONS>;
export type CompareValues = OptionValues<typeof COMPARE_OPTIONS>;

/** A positional argument: commander's spelling (`<dirs...>`), the synopsis's (`DIR...`) and its help. */
export interface CommandArgument {
  name: string;
  shown: string;
  help: string;
}

export interface CommandSpec {
  name: string;
  description: string;
  arguments: readonly CommandArgument[];
  options: OptionTable;
  /** Presets whose options differ enough for one synopsis each (`labs audit`: reward, token-level). */
  synopsisPresets?: readonly (readonly string[])[];
}

export const COMMANDS = [
  {
    name: 'list',
    description: 'list every experiment with its options, defaults and meanings',
    arguments: [],
    options: LIST_OPTIONS,
  },
  {
    name: 'run',
    description: 'run an experiment and write its RunRecord under runs/',
    arguments: [],
    options: RUN_OPTIONS,
  },
  {
    name: 'findings',
    description:
      'run what is missing of a findings manifest (the runs and comparisons behind a docs table), then compare',
    arguments: [
      { name: '<manifest>', shown: 'NAME|FILE', help: 'NAME (docs/findings/NAME.json) or a manifest file' },
    ],
    options: FINDINGS_OPTIONS,
  },
  {
    name: 'merge',
    description:
      'build the multi-seed (or sweep) record of a labs run --seeds/--sweep from its per-seed records (the --out directories of its shards)',
    arguments: [
      {
        name: '<dirs...>',
        shown: 'DIR...',
        help: "the shards' --out directories (or the one directory they share)",
      },
    ],
    options: MERGE_OPTIONS,
  },
  {
    name: 'conformance',
    description: "run every golden case of a verl golden file through the lab's kernels",
    arguments: [{ name: '<file>', shown: 'FILE', help: 'golden JSON file (format in its meta.format)' }],
    options: CONFORMANCE_OPTIONS,
  },
  {
    name: 'audit',
    description: 'diagnose real rollout dumps: zero-variance groups, per-task waste, token denominators',
    arguments: [{ name: '<path>', shown: 'PATH', help: 'a dump directory or file' }],
    options: AUDIT_OPTIONS,
    synopsisPresets: [REWARD_PRESETS, TOKEN_PRESETS],
  },
  {
    name: 'report',
    description: 'render one or more RunRecords as a self-contained HTML page with plots',
    arguments: [
      {
        name: '<records...>',
        shown: 'RECORD.json...',
        help: 'record.json files (several are overlaid for comparison)',
      },
    ],
    options: REPORT_OPTIONS,
  },
  {
    name: 'compare',
    description:
      'paired differences B − A of two --seeds records run on the same seeds (CI, p, Holm p, mde80)',
    arguments: [
      { name: '<a>', shown: 'A.json', help: 'baseline record.json (a --seeds run)' },
      { name: '<b>', shown: 'B.json', help: 'record.json to compare with it (same seeds)' },
    ],
    options: COMPARE_OPTIONS,
  },
] as const satisfies readonly CommandSpec[];

/**
 * The synopsis of one command as docs/cli.md shows it: `labs NAME ARGS [--flag VALUE]...` wrapped at
 * `width` columns, one per preset group where the command has them (synopsisWords says how an
 * option is shown).
 */
export function commandSynopsis(spec: CommandSpec, width = 100): string[] {
  const usage = ['labs', spec.name, ...spec.arguments.map((a) => a.shown)].join(' ');
  const groups = spec.synopsisPresets ?? [undefined];
  return groups.flatMap((presets) => synopsisLines(usage, synopsisWords(spec.options, presets), width));
}
