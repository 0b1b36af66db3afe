/**
 * The CLI's grammar: the commands of commandTables.ts, each with its option table (declared once:
 * commandOptions.ts), built into commander's program. `parseCli(argv)` turns argv (without `node`
 * and the script) into a typed command object or throws a LabError with code BAD_CLI; it never
 * prints or exits, so tests can use it.
 */
import { Command, CommanderError } from 'commander';
import { LabError } from '../core/errors.js';
import { VERSION } from '../experiments/version.js';
import { AUDIT_OPTIONS, auditExtraOf, checkAuditOptions, presetOf } from './auditOptions.js';
import { addOptions, commandWords, flagOption, readOptions } from './commandOptions.js';
import {
  COMMANDS,
  COMPARE_OPTIONS,
  CONFORMANCE_OPTIONS,
  LIST_OPTIONS,
  MERGE_OPTIONS,
  REPORT_OPTIONS,
} from './commandTables.js';
import { EXIT_CODES_HELP } from './errorOutput.js';
import { metricsExtraOf } from './metricsOptions.js';
import { checkRunOptions, FINDINGS_OPTIONS, jobsOf, RUN_OPTIONS } from './runOptions.js';
import { checkShardCount } from './sharedOptions.js';
import { terminalColumns } from './terminal.js';
import { tokenAuditOf } from './tokenAuditOptions.js';

/** The options of `labs` itself (before a command). */
const PROGRAM_OPTIONS = { debug: flagOption('--debug', 'show stack traces on errors') } as const;

export { parseSeeds } from './sharedOptions.js';

type Given = (key: string) => boolean;

/** `labs compare`: --metric-a/--metric-b come in pairs, and not together with --metric. */
function checkMetricPairs(metric: string[], a: string[], b: string[]): void {
  if (a.length !== b.length) {
    const flag = a.length < b.length ? '--metric-a' : '--metric-b';
    throw new LabError(
      'BAD_CLI',
      `${flag}: --metric-a and --metric-b come in pairs (got ${a.length} --metric-a and ${b.length} --metric-b)`,
      { details: { field: flag } },
    );
  }
  if (a.length && metric.length) {
    throw new LabError(
      'BAD_CLI',
      '--metric: not together with --metric-a/--metric-b (for the same key in both records, give it as --metric-a K --metric-b K)',
      { details: { field: '--metric' } },
    );
  }
}

/**
 * From each command's parsed option values (and positional arguments) to what its command module
 * takes; the checks across options run here. The ParsedCli type is derived from these, and their
 * values' types from the option tables.
 */
const BUILDERS = {
  list: (_args: unknown[], raw: Record<string, unknown>, given: Given, debug: boolean) => {
    const o = readOptions(LIST_OPTIONS, raw, given);
    return { command: 'list' as const, json: o.json, debug };
  },
  run: (_args: unknown[], raw: Record<string, unknown>, given: Given, debug: boolean) => {
    const o = readOptions(RUN_OPTIONS, raw, given);
    checkRunOptions(o);
    return {
      command: 'run' as const,
      experiment: o.experiment,
      seeds: o.seeds ?? [o.seed],
      multi: o.seeds !== null,
      sets: o.set,
      /** `--sweep key=v1,v2,...`: run at each value (null: no sweep). */
      sweep: o.sweep,
      json: o.json,
      out: o.out,
      /** HTML report path; '' means report.html next to the record; null means none. */
      html: o.html,
      /** `--dump DIR`: per-update token exports (prime-rl layout) of an experiment that records them. */
      dump: o.dump,
      progress: o.progress,
      /** Threads for `--seeds`/`--sweep` (1 = serial on the main thread); default os.availableParallelism(). */
      jobs: jobsOf(o.jobs),
      /**
       * Whether `--jobs` was given: its workers then start at once; by default they start only once
       * the run's pace shows they pay (src/cli/runtime/seedPool.ts).
       */
      jobsGiven: o.jobs !== null,
      /**
       * `--shard K/N`: run only share K of N of the job list, writing per-seed records into `--out`
       * (src/cli/shard.ts); `'auto'`: from the scheduler's variables; null: the whole list.
       */
      shard: o.shard,
      /** `--shard-count N` (with `--shard auto`, where the scheduler gives no count), else null. */
      shardCount: o.shardCount,
      /** `--force`: replace a record already in the output directory. */
      force: o.force,
      debug,
    };
  },
  findings: (args: unknown[], raw: Record<string, unknown>, given: Given, debug: boolean) => {
    const o = readOptions(FINDINGS_OPTIONS, raw, given);
    checkShardCount(o.shard, o.shardCount);
    return {
      command: 'findings' as const,
      /** A manifest file, or NAME for docs/findings/NAME.json. */
      manifest: args[0] as string,
      out: o.out,
      /** `--seeds`: instead of the manifest's (null: the manifest's). */
      seeds: o.seeds,
      /** `--set key=value`: added to every run's options (after the manifest's, so they win). */
      sets: o.set,
      jobs: jobsOf(o.jobs),
      jobsGiven: o.jobs !== null,
      shard: o.shard,
      shardCount: o.shardCount,
      /** `--phase`: run only this seed set of a format-2 manifest (null: both). */
      phase: o.phase,
      /** `--results FILE`: where a format-2 manifest's results go (null: NAME.results.json beside it). */
      results: o.results,
      json: o.json,
      progress: o.progress,
      debug,
    };
  },
  merge: (args: unknown[], raw: Record<string, unknown>, given: Given, debug: boolean) => {
    const o = readOptions(MERGE_OPTIONS, raw, given);
    /** `dirs`: the output directories of the shards (or one shared directory) of one `labs run --seeds/--sweep`. */
    return { command: 'merge' as const, dirs: args[0] as string[], out: o.out, json: o.json, debug };
  },
  conformance: (args: unknown[], raw: Record<string, unknown>, given: Given, debug: boolean) => {
    const o = readOptions(CONFORMANCE_OPTIONS, raw, given);
    return { command: 'conformance' as const, file: args[0] as string, json: o.json, debug };
  },
  audit: (args: unknown[], raw: Record<string, unknown>, given: Given, debug: boolean) => {
    const o = readOptions(AUDIT_OPTIONS, raw, given, String(raw.preset));
    checkAuditOptions(o);
    return {
      command: 'audit' as const,
      path: args[0] as string,
      preset: presetOf(o),
      json: o.json,
      out: o.out,
      skipBadRows: o.skipBadRows,
      reward: o.reward,
      columns: o.columns,
      /** An all-equal group at or below this reward is all_wrong (default 0). */
      failValue: o.failValue,
      /** An all-equal group at or above this reward is all_right; a sample at or above it is correct (default 1). */
      passValue: o.passValue,
      /** DuckDB memory limit (`--memory-limit 1GB`); null = DuckDB's default (80% of RAM). */
      memoryLimit: o.memoryLimit,
      /** Audit-specific options (TRL grouping and scaling, zero-variance tolerance, ranker columns). */
      auditExtra: { ...auditExtraOf(o), ...metricsExtraOf(o) },
      /** Token-level presets' options (`--what-if`, generic-tokens columns, bins) and `--html`. */
      tokenExtra: tokenAuditOf(o, o.preset, o.columns),
      /** `--force`: replace a record already in `--out`. */
      force: o.force,
      /** The options that shape the numbers, as words that give them again (the page's rerun line). */
      rerunWords: commandWords(AUDIT_OPTIONS, o),
      debug,
    };
  },
  report: (args: unknown[], raw: Record<string, unknown>, given: Given, debug: boolean) => {
    const o = readOptions(REPORT_OPTIONS, raw, given);
    return { command: 'report' as const, records: args[0] as string[], html: o.html, png: o.png, debug };
  },
  compare: (args: unknown[], raw: Record<string, unknown>, given: Given, debug: boolean) => {
    const o = readOptions(COMPARE_OPTIONS, raw, given);
    checkMetricPairs(o.metric, o.metricA, o.metricB);
    return {
      command: 'compare' as const,
      a: args[0] as string,
      b: args[1] as string,
      /** Metric keys to compare (empty: the experiment's headline metrics). */
      metrics: o.metric,
      /**
       * `--metric-a KA --metric-b KB` (repeatable, paired by position): compare B's KB with A's KA,
       * e.g. across experiments; empty: compare the same keys.
       */
      pairs: o.metricA.map((k, i): [string, string] => [k, o.metricB[i] as string]),
      json: o.json,
      html: o.html,
      debug,
    };
  },
} satisfies Record<(typeof COMMANDS)[number]['name'], unknown>;

export type ParsedCli =
  | {
      command: 'help';
      text: string;
      debug: boolean;
      /** `labs run -e NAME --help`: the experiment whose options are appended (from its declaration). */
      experiment?: string;
    }
  | { command: 'version'; text: string; debug: boolean }
  | { [K in keyof typeof BUILDERS]: ReturnType<(typeof BUILDERS)[K]> }[keyof typeof BUILDERS];

/** The program: the top-level flags, then one subcommand per entry of COMMANDS (commandTables.ts). */
function buildProgram(sink: (p: ParsedCli) => void): Command {
  const program = new Command();
  let helpText = '';
  program
    .name('labs')
    .description(
      'reasoning-rl-labs: where a verifiable reward becomes (or fails to become) a policy gradient',
    )
    .version(VERSION, '-V, --version', 'print the version');
  addOptions(program, PROGRAM_OPTIONS);
  program
    .exitOverride()
    .configureOutput({
      writeOut: (s) => {
        helpText += s;
      },
      writeErr: (s) => {
        helpText += s;
      },
      outputError: () => {},
      // commander's defaults ask process.stdout.isTTY, which builds Node's stdout stream even when
      // stdout is a file or a pipe (see terminal.ts); the help text has no colours to keep or strip.
      // (undefined, off a terminal, is what commander itself returns there: it then wraps at 80)
      getOutHelpWidth: terminalColumns as () => number,
      getOutHasColors: () => false,
    })
    .showSuggestionAfterError(true)
    .addHelpText('afterAll', `\n${EXIT_CODES_HELP}\n`);
  const debugOf = () => Boolean(program.opts().debug);

  for (const spec of COMMANDS) {
    const command = program.command(spec.name).description(spec.description);
    for (const a of spec.arguments) command.argument(a.name, a.help);
    addOptions(command, spec.options);
    command.action((...args: unknown[]) => {
      const given = (key: string) => command.getOptionValueSource(key) === 'cli';
      const positional = args.slice(0, spec.arguments.length);
      sink(BUILDERS[spec.name](positional, command.opts(), given, debugOf()));
    });
  }

  program.hook('preAction', () => {
    helpText = '';
  });
  (program as Command & { helpTextRef?: () => string }).helpTextRef = () => helpText;
  return program;
}

/** The value of `-e NAME`, `--experiment NAME` or `--experiment=NAME` in argv, if any. */
function experimentArgument(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if ((a === '-e' || a === '--experiment') && i + 1 < argv.length) return argv[i + 1];
    if (a.startsWith('--experiment=')) return a.slice('--experiment='.length);
  }
  return undefined;
}

/**
 * Parses argv (e.g. `['run', '--experiment', 'agent', '--seed', '7']`). Throws LabError('BAD_CLI')
 * with one clear line for unknown commands or options, missing arguments and bad values.
 */
export function parseCli(argv: readonly string[]): ParsedCli {
  let result: ParsedCli | undefined;
  const program = buildProgram((p) => {
    result = p;
  });
  const debug = argv.includes('--debug');
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof LabError) throw e;
    if (e instanceof CommanderError) {
      const captured = (program as Command & { helpTextRef: () => string }).helpTextRef();
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help') {
        const experiment = argv[0] === 'run' ? experimentArgument(argv) : undefined;
        return { command: 'help', text: captured, debug, ...(experiment ? { experiment } : {}) };
      }
      if (e.code === 'commander.version') return { command: 'version', text: VERSION, debug };
      if (e.code === 'commander.executeSubCommandAsync') throw e;
      const message = e.message.replace(/^error:\s*/i, '').split('\n')[0] ?? e.message;
      throw new LabError('BAD_CLI', `${message} (see labs --help)`, {
        cause: e,
        details: { commanderCode: e.code },
      });
    }
    throw e;
  }
  if (!result) {
    // No subcommand: show the top-level help.
    return { command: 'help', text: `${program.helpInformation()}\n${EXIT_CODES_HELP}\n`, debug };
  }
  return result;
}
