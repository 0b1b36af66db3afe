/**
 * The CLI's grammar: every command and option in one declarative table (commander for the syntax,
 * zod for the values). `parseCli(argv)` turns argv (without `node` and the script) into a typed
 * command object or throws a LabError with code BAD_CLI; it never prints or exits, so tests can use it.
 */
import { availableParallelism } from 'node:os';
import { Command, CommanderError, Option } from 'commander';
import { AUDIT_PRESETS, type AuditPresetName, CANONICAL_COLUMNS } from '../audit/presets.js';
import { TOKEN_PRESETS, type TokenPresetName } from '../audit/tokens/presetNames.js';
import { LabError } from '../core/errors.js';
import { parseSweep, type SweepSpec } from '../experiments/sweepSpec.js';
import { VERSION } from '../experiments/version.js';
import { type AuditCliExtra, addAuditExtraOptions, auditExtraOf } from './auditOptions.js';
import { EXIT_CODES_HELP } from './errorOutput.js';
import { addMetricsOptions, type MetricsCliExtra, metricsExtraOf } from './metricsOptions.js';
import { parseShard, type Shard } from './shard.js';
import { terminalColumns } from './terminal.js';
import { addTokenAuditOptions, type TokenCliExtra, tokenAuditOf } from './tokenAuditOptions.js';

/**
 * A seed: an integer in [0, 2^31-1]. A plain check rather than a zod schema: `labs --help` and
 * `--version` then never load zod, whose import is most of the CLI's start-up (docs/bench-startup.md).
 */
function isSeed(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= 2 ** 31 - 1;
}

/** `A..B` (inclusive) or a comma list `1,4,9`. */
export function parseSeeds(text: string): number[] {
  const range = /^(\d+)\.\.(\d+)$/.exec(text.trim());
  let seeds: number[];
  if (range) {
    const a = Number(range[1]);
    const b = Number(range[2]);
    if (b < a)
      throw new LabError('BAD_CLI', `--seeds ${text}: the range is empty (B < A)`, {
        details: { field: '--seeds' },
      });
    if (b - a >= 10_000)
      throw new LabError('BAD_CLI', `--seeds ${text}: at most 10000 seeds`, {
        details: { field: '--seeds' },
      });
    seeds = Array.from({ length: b - a + 1 }, (_, i) => a + i);
  } else if (/^\d+(,\d+)*$/.test(text.trim())) {
    seeds = text.trim().split(',').map(Number);
  } else {
    throw new LabError('BAD_CLI', `--seeds expects A..B or a comma list like 1,2,3, got '${text}'`, {
      details: { field: '--seeds' },
    });
  }
  const seen = new Set<number>();
  for (const s of seeds) {
    // A repeated seed is the same run twice: it would shrink the CI without adding evidence.
    if (seen.has(s)) {
      throw new LabError('BAD_CLI', `--seeds ${text}: seed ${s} is listed twice`, {
        details: { field: '--seeds' },
      });
    }
    seen.add(s);
    if (!isSeed(s)) {
      throw new LabError('BAD_CLI', `--seeds: seed ${s} is out of range [0, 2^31-1]`, {
        details: { field: '--seeds' },
      });
    }
  }
  return seeds;
}

export type ParsedCli =
  | {
      command: 'help';
      text: string;
      debug: boolean;
      /** `labs run -e NAME --help`: the experiment whose options are appended (from its declaration). */
      experiment?: string;
    }
  | { command: 'version'; text: string; debug: boolean }
  | { command: 'list'; json: boolean; debug: boolean }
  | {
      command: 'run';
      experiment: string;
      seeds: number[];
      multi: boolean;
      sets: string[];
      /** `--sweep key=v1,v2,...`: run at each value (null: no sweep). */
      sweep: SweepSpec | null;
      json: boolean;
      out: string | null;
      /** HTML report path; '' means report.html next to the record; null means none. */
      html: string | null;
      /** `--dump DIR`: per-update token exports (prime-rl layout) of an experiment that records them. */
      dump: string | null;
      progress: boolean;
      /** Threads for `--seeds`/`--sweep` (1 = serial on the main thread); default os.availableParallelism(). */
      jobs: number;
      /**
       * Whether `--jobs` was given: its workers then start at once; by default they start only once
       * the run's pace shows they pay (src/cli/seedPool.ts).
       */
      jobsGiven: boolean;
      /**
       * `--shard K/N`: run only share K of N of the job list, writing per-seed records into `--out`
       * (src/cli/shard.ts); `'auto'`: from the scheduler's variables; null: the whole list.
       */
      shard: Shard | 'auto' | null;
      /** `--shard-count N` (with `--shard auto`, where the scheduler gives no count), else null. */
      shardCount: string | null;
      /** `--force`: replace a record already in the output directory. */
      force: boolean;
      debug: boolean;
    }
  | {
      command: 'findings';
      /** A manifest file, or NAME for docs/findings/NAME.json. */
      manifest: string;
      out: string | null;
      /** `--seeds`: instead of the manifest's (null: the manifest's). */
      seeds: number[] | null;
      /** `--set key=value`: added to every run's options (after the manifest's, so they win). */
      sets: string[];
      jobs: number;
      jobsGiven: boolean;
      shard: Shard | 'auto' | null;
      shardCount: string | null;
      /** `--phase`: run only this seed set of a format-2 manifest (null: both). */
      phase: 'discovery' | 'confirmation' | null;
      /** `--results FILE`: where a format-2 manifest's results go (null: NAME.results.json beside it). */
      results: string | null;
      json: boolean;
      progress: boolean;
      debug: boolean;
    }
  | {
      command: 'merge';
      /** Output directories of the shards (or one shared directory) of one `labs run --seeds/--sweep`. */
      dirs: string[];
      out: string;
      json: boolean;
      debug: boolean;
    }
  | { command: 'conformance'; file: string; json: boolean; debug: boolean }
  | {
      command: 'audit';
      path: string;
      preset: AuditPresetName | TokenPresetName;
      json: boolean;
      out: string | null;
      skipBadRows: boolean;
      reward: string | null;
      columns: Record<string, string>;
      /** An all-equal group at or below this reward is all_wrong (default 0). */
      failValue: number;
      /** An all-equal group at or above this reward is all_right; a sample at or above it is correct (default 1). */
      passValue: number;
      /** DuckDB memory limit (`--memory-limit 1GB`); null = DuckDB's default (80% of RAM). */
      memoryLimit: string | null;
      /** Audit-specific options (TRL grouping and scaling, zero-variance tolerance, ranker columns). */
      auditExtra: AuditCliExtra & MetricsCliExtra;
      /** Token-level presets' options (`--what-if`, generic-tokens columns, bins) and `--html`. */
      tokenExtra: TokenCliExtra;
      /** `--force`: replace a record already in `--out`. */
      force: boolean;
      debug: boolean;
    }
  | { command: 'report'; records: string[]; html: string; png: string | null; debug: boolean }
  | {
      command: 'compare';
      a: string;
      b: string;
      /** Metric keys to compare (empty: the experiment's headline metrics). */
      metrics: string[];
      /**
       * `--metric-a KA --metric-b KB` (repeatable, paired by position): compare B's KB with A's KA,
       * e.g. across experiments; empty: compare the same keys.
       */
      pairs: [string, string][];
      json: boolean;
      html: string | null;
      debug: boolean;
    };

/** A finite number given as an option's text (`--pass-value 0.5`), else BAD_CLI naming the flag. */
function finiteOption(value: unknown, flag: string): number {
  const v = typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  if (!Number.isFinite(v)) {
    throw new LabError('BAD_CLI', `${flag} expects a finite number, got '${String(value)}'`, {
      details: { field: flag },
    });
  }
  return v;
}

/** `--jobs N`: an integer in [1, 256], else BAD_CLI. */
function jobsOption(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(n >= 1 && n <= 256)) {
    throw new LabError('BAD_CLI', `--jobs expects an integer in [1, 256], got '${text}'`, {
      details: { field: '--jobs' },
    });
  }
  return n;
}

/** `--memory-limit`: a size DuckDB understands (`512MB`, `1.5GB`, `2GiB`), else BAD_CLI. */
function memoryLimitOption(value: unknown): string | null {
  if (value === undefined) return null;
  const text = String(value).trim();
  if (!/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(text)) {
    throw new LabError('BAD_CLI', `--memory-limit expects a size like 512MB or 2GB, got '${text}'`, {
      details: { field: '--memory-limit' },
    });
  }
  return text;
}

function buildProgram(sink: (p: ParsedCli) => void): Command {
  const program = new Command();
  let helpText = '';
  program
    .name('labs')
    .description(
      'reasoning-rl-labs: where a verifiable reward becomes (or fails to become) a policy gradient',
    )
    .version(VERSION, '-V, --version', 'print the version')
    .option('--debug', 'show stack traces on errors')
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

  program
    .command('list')
    .description('list every experiment with its options, defaults and meanings')
    .option('--json', 'print as JSON')
    .action((o: { json?: boolean }) => sink({ command: 'list', json: Boolean(o.json), debug: debugOf() }));

  program
    .command('run')
    .description('run an experiment and write its RunRecord under runs/')
    .requiredOption('-e, --experiment <name>', 'experiment name (see `labs list`)')
    .option('--seed <n>', 'random seed (integer >= 0; not together with --seeds)', '7')
    .option(
      '--seeds <A..B>',
      'run many seeds (A..B inclusive, or 1,2,3) and summarise each metric with a 95% CI',
    )
    .option(
      '--set <key=value>',
      'set an experiment option (repeatable); `labs list` shows the keys, defaults and accepted ranges',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--sweep <key=v1,v2,...>',
      'run at each value of one option (the same seeds at every value) and report the dose-response; one --sweep per run (no grid)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--json', 'print the RunRecord as JSON instead of the summary')
    .option('--out <dir>', 'write record.json into this directory instead of runs/<name>__<seed>__<time>/')
    .option('--force', 'replace a record.json already in --out (never done without it)')
    .option(
      '--html [file]',
      'also write an HTML report with plots (default: report.html next to record.json)',
    )
    .option(
      '--dump <dir>',
      "write every update's tokens in prime-rl's token-export layout under DIR/<arm> (experiments that record tokens: mismatch; one seed)",
    )
    .option('--no-progress', 'never show a progress bar')
    .option(
      '--jobs <n>',
      'with --seeds (also --sweep ... --seeds): run this many seeds at once, on this thread and N-1 worker threads (1 = serial; default: the number of cores, the workers started only once the seeds are long or many enough to pay for them)',
    )
    .option(
      '--shard <K/N|auto>',
      'with --seeds or --sweep and --out: run only share K of N of the (sweep value x seed) runs, writing their per-seed records into --out for `labs merge` (auto: from SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or PARALLEL_SEQ)',
    )
    .option(
      '--shard-count <n>',
      'with --shard auto: the number of shards, where the scheduler does not give it (Kubernetes, GNU parallel; or LABS_SHARD_COUNT)',
    )
    .action(
      (
        o: {
          experiment: string;
          seed: string;
          seeds?: string;
          set: string[];
          sweep: string[];
          json?: boolean;
          out?: string;
          html?: string | boolean;
          dump?: string;
          progress: boolean;
          jobs?: string;
          shard?: string;
          shardCount?: string;
          force?: boolean;
        },
        cmd: Command,
      ) => {
        if (o.shard !== undefined) {
          if (o.seeds === undefined && o.sweep === undefined) {
            throw new LabError('BAD_CLI', '--shard splits the runs of --seeds or --sweep; give one of them', {
              details: { field: '--shard' },
            });
          }
          if (o.out === undefined) {
            throw new LabError(
              'BAD_CLI',
              '--shard needs --out DIR: every shard writes its per-seed records there for labs merge',
              { details: { field: '--out' } },
            );
          }
          if (o.html !== undefined) {
            throw new LabError(
              'BAD_CLI',
              '--html with --shard: a shard writes no record to report; run labs report on the record labs merge writes',
              { details: { field: '--html' } },
            );
          }
        }
        if (o.shardCount !== undefined && o.shard?.trim() !== 'auto') {
          throw new LabError(
            'BAD_CLI',
            '--shard-count goes with --shard auto (--shard K/N names the count)',
            {
              details: { field: '--shard-count' },
            },
          );
        }
        if (o.seeds !== undefined && cmd.getOptionValueSource('seed') === 'cli') {
          throw new LabError(
            'BAD_CLI',
            `--seed and --seeds exclude each other (got --seed ${o.seed} --seeds ${o.seeds})`,
            {
              details: { field: '--seed' },
            },
          );
        }
        // Digits only: '' or '0x10' must not silently become seed 0 or 16 through Number().
        const seed = /^\d+$/.test(o.seed.trim()) ? Number(o.seed.trim()) : Number.NaN;
        if (!isSeed(seed)) {
          throw new LabError('BAD_CLI', `--seed expects an integer in [0, 2^31-1], got '${o.seed}'`, {
            details: { field: '--seed' },
          });
        }
        if (o.sweep.length > 1) {
          // A second --sweep used to replace the first silently. A grid is not supported: its
          // dose-response tables and plots are drawn along one option.
          throw new LabError(
            'BAD_CLI',
            `--sweep is given ${o.sweep.length} times (${o.sweep.join(', ')}): one sweep per run, not a grid; sweep one option and fix the others with --set (one run per value)`,
            { details: { field: '--sweep' } },
          );
        }
        if (o.jobs !== undefined && o.seeds === undefined) {
          // It was accepted and ignored: one seed (or a sweep over one seed) runs on this thread.
          throw new LabError(
            'BAD_CLI',
            `--jobs ${o.jobs} applies to --seeds (the seeds are shared among the threads); a single seed runs on one thread`,
            { details: { field: '--jobs' } },
          );
        }
        const multi = o.seeds !== undefined;
        sink({
          command: 'run',
          experiment: o.experiment,
          seeds: multi ? parseSeeds(o.seeds as string) : [seed],
          multi,
          sets: o.set,
          sweep: o.sweep[0] === undefined ? null : parseSweep(o.sweep[0]),
          json: Boolean(o.json),
          out: o.out ?? null,
          html: typeof o.html === 'string' ? o.html : o.html === true ? '' : null,
          dump: o.dump ?? null,
          progress: o.progress,
          jobs: o.jobs === undefined ? availableParallelism() : jobsOption(o.jobs),
          jobsGiven: o.jobs !== undefined,
          shard: o.shard === undefined ? null : o.shard.trim() === 'auto' ? 'auto' : parseShard(o.shard),
          shardCount: o.shardCount ?? null,
          force: Boolean(o.force),
          debug: debugOf(),
        });
      },
    );

  program
    .command('findings')
    .description(
      'run what is missing of a findings manifest (the runs and comparisons behind a docs table), then compare',
    )
    .argument('<manifest>', 'NAME (docs/findings/NAME.json) or a manifest file')
    .option('--out <dir>', 'write every run under this directory (default runs/findings/NAME/)')
    .option('--seeds <A..B>', "run these seeds instead of the manifest's")
    .option(
      '--set <key=value>',
      "set an option of every run (repeatable; wins over the manifest's)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--jobs <n>', 'run this many seeds at once (as labs run --jobs)')
    .option('--shard <K/N|auto>', "run only share K of N of all the runs' seeds (as labs run --shard)")
    .option('--shard-count <n>', 'with --shard auto: the number of shards (as labs run)')
    .option(
      '--phase <set>',
      'format-2 manifests: run only the discovery or the confirmation seeds (default: both)',
    )
    .option(
      '--results <file>',
      'format-2 manifests: write the claims here (default: NAME.results.json beside the manifest)',
    )
    .option('--json', 'print the findings (records and comparisons) as JSON')
    .option('--no-progress', 'never show a progress bar')
    .action(
      (
        manifest: string,
        o: {
          out?: string;
          seeds?: string;
          set: string[];
          jobs?: string;
          shard?: string;
          shardCount?: string;
          phase?: string;
          results?: string;
          json?: boolean;
          progress: boolean;
        },
      ) => {
        if (o.phase !== undefined && o.phase !== 'discovery' && o.phase !== 'confirmation') {
          throw new LabError('BAD_CLI', `--phase expects discovery or confirmation, got '${o.phase}'`, {
            details: { field: '--phase' },
          });
        }
        if (o.shardCount !== undefined && o.shard?.trim() !== 'auto') {
          throw new LabError(
            'BAD_CLI',
            '--shard-count goes with --shard auto (--shard K/N names the count)',
            {
              details: { field: '--shard-count' },
            },
          );
        }
        sink({
          command: 'findings',
          manifest,
          out: o.out ?? null,
          seeds: o.seeds === undefined ? null : parseSeeds(o.seeds),
          sets: o.set,
          jobs: o.jobs === undefined ? availableParallelism() : jobsOption(o.jobs),
          jobsGiven: o.jobs !== undefined,
          shard: o.shard === undefined ? null : o.shard.trim() === 'auto' ? 'auto' : parseShard(o.shard),
          shardCount: o.shardCount ?? null,
          phase: (o.phase as 'discovery' | 'confirmation' | undefined) ?? null,
          results: o.results ?? null,
          json: Boolean(o.json),
          progress: o.progress,
          debug: debugOf(),
        });
      },
    );

  program
    .command('merge')
    .description(
      'build the multi-seed (or sweep) record of a labs run --seeds/--sweep from its per-seed records (the --out directories of its shards)',
    )
    .argument('<dirs...>', "the shards' --out directories (or the one directory they share)")
    .requiredOption('--out <dir>', 'write record.json into this directory')
    .option('--json', 'print the record as JSON instead of the summary')
    .action((dirs: string[], o: { out: string; json?: boolean }) =>
      sink({ command: 'merge', dirs, out: o.out, json: Boolean(o.json), debug: debugOf() }),
    );

  program
    .command('conformance')
    .description("run every golden case of a verl golden file through the lab's kernels")
    .argument('<file>', 'golden JSON file (format in its meta.format)')
    .option('--json', 'print the result as JSON')
    .action((file: string, o: { json?: boolean }) =>
      sink({ command: 'conformance', file, json: Boolean(o.json), debug: debugOf() }),
    );

  const audit = program
    .command('audit')
    .description('diagnose real rollout dumps: zero-variance groups, per-task waste, token denominators')
    .argument('<path>', 'a dump directory or file')
    .addOption(
      new Option('--preset <preset>', 'dump layout')
        .choices([...Object.keys(AUDIT_PRESETS), ...TOKEN_PRESETS])
        .default('generic'),
    )
    .option('--json', 'print the result as JSON')
    .option('--out <dir>', 'also write the result as record.json into this directory')
    .option('--force', 'replace a record.json already in --out (never done without it)')
    .option('--skip-bad-rows', 'skip malformed rows and count them instead of failing')
    .option('--reward <column>', 'use this column as the reward (trl: instead of summing the reward columns)')
    .option(
      '--pass-value <x>',
      'reward at or above which a sample is correct (all-equal group: all_right)',
      '1',
    )
    .option('--fail-value <x>', 'reward at or below which an all-equal group is all_wrong', '0')
    .option('--memory-limit <size>', "DuckDB memory limit, e.g. '1GB' (beyond it DuckDB spills to disk)");
  addAuditExtraOptions(audit);
  addMetricsOptions(audit);
  addTokenAuditOptions(audit);
  // One `--col-<name> SOURCE` remapping flag per canonical audit column.
  for (const col of CANONICAL_COLUMNS)
    audit.option(`--col-${col.replace(/_/g, '-')} <source>`, `read '${col}' from this column`);
  audit.action((path: string, o: Record<string, string | boolean | undefined>, cmd: Command) => {
    const columns: Record<string, string> = {};
    for (const col of CANONICAL_COLUMNS) {
      const key = `col${col
        .split('_')
        .map((p) => p[0]?.toUpperCase() + p.slice(1))
        .join('')}`;
      const v = o[key];
      if (typeof v === 'string') columns[col] = v;
    }
    sink({
      command: 'audit',
      path,
      preset: o.preset as AuditPresetName | TokenPresetName,
      json: Boolean(o.json),
      out: typeof o.out === 'string' ? o.out : null,
      skipBadRows: Boolean(o.skipBadRows),
      reward: typeof o.reward === 'string' ? o.reward : null,
      columns,
      failValue: finiteOption(o.failValue, '--fail-value'),
      passValue: finiteOption(o.passValue, '--pass-value'),
      memoryLimit: memoryLimitOption(o.memoryLimit),
      force: Boolean(o.force),
      auditExtra: {
        ...auditExtraOf({
          ...o,
          scaleRewardsGiven: cmd.getOptionValueSource('scaleRewards') === 'cli',
        }),
        ...metricsExtraOf(o),
      },
      tokenExtra: tokenAuditOf(o, columns),
      debug: debugOf(),
    });
  });

  program
    .command('report')
    .description('render one or more RunRecords as a self-contained HTML page with plots')
    .argument('<records...>', 'record.json files (several are overlaid for comparison)')
    .requiredOption('--html <file>', 'output HTML file')
    .option('--png <dir>', 'also write every plot as a PNG into this directory')
    .action((records: string[], o: { html: string; png?: string }) =>
      sink({ command: 'report', records, html: o.html, png: o.png ?? null, debug: debugOf() }),
    );

  program
    .command('compare')
    .description(
      'paired differences B − A of two --seeds records run on the same seeds (CI, p, Holm p, mde80)',
    )
    .argument('<a>', 'baseline record.json (a --seeds run)')
    .argument('<b>', 'record.json to compare with it (same seeds)')
    .option(
      '--metric <key>',
      "compare this metric key (repeatable; default: the experiment's headline metrics)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--metric-a <key>',
      "with --metric-b: A's metric key of a pair compared across records (e.g. two experiments; repeatable, paired by position)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--metric-b <key>',
      "with --metric-a: B's metric key of the pair (the difference is B's value − A's, by seed)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--json', 'print the comparison as JSON')
    .option('--html <file>', 'also draw the differences in an HTML page')
    .action(
      (
        a: string,
        b: string,
        o: { metric: string[]; metricA: string[]; metricB: string[]; json?: boolean; html?: string },
      ) => {
        if (o.metricA.length !== o.metricB.length) {
          const flag = o.metricA.length < o.metricB.length ? '--metric-a' : '--metric-b';
          throw new LabError(
            'BAD_CLI',
            `${flag}: --metric-a and --metric-b come in pairs (got ${o.metricA.length} --metric-a and ${o.metricB.length} --metric-b)`,
            { details: { field: flag } },
          );
        }
        if (o.metricA.length && o.metric.length) {
          throw new LabError(
            'BAD_CLI',
            '--metric: not together with --metric-a/--metric-b (for the same key in both records, give it as --metric-a K --metric-b K)',
            { details: { field: '--metric' } },
          );
        }
        sink({
          command: 'compare',
          a,
          b,
          metrics: o.metric,
          pairs: o.metricA.map((k, i) => [k, o.metricB[i] as string]),
          json: Boolean(o.json),
          html: o.html ?? null,
          debug: debugOf(),
        });
      },
    );

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
