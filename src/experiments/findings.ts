/**
 * A findings manifest (`docs/findings/<name>.json`): the runs behind one multi-seed table of the docs
 * and the comparisons the table reports, so that one command rebuilds it (`labs findings NAME`).
 * Each run is a `labs run --experiment E --seeds S [--set k=v]... [--sweep k=v1,...]`; a comparison
 * is `labs compare` between two runs' records, paired by seed (tabular vs neural, one experiment vs
 * another). The manifest says what to run; the records and statistics are the CLI's own.
 *
 *     {
 *       "format": "labs-findings/1",
 *       "title": "mask: tabular vs neural policy",
 *       "doc": "docs/experiments/neural.md",
 *       "seeds": "1..30",
 *       "runs": [
 *         { "name": "mask-table", "experiment": "mask", "set": { "policy": "table" } },
 *         { "name": "mask-neural", "experiment": "mask", "set": { "policy": "neural" } }
 *       ],
 *       "comparisons": [{ "a": "mask-table", "b": "mask-neural", "metrics": ["eval_success.correct"] }]
 *     }
 */
import { z } from 'zod';
import { LabError } from '../core/errors.js';

export const FINDINGS_FORMAT = 'labs-findings/1';

const RUN_NAME = /^[a-z0-9][a-z0-9_.-]*$/;

const Manifest = z
  .object({
    format: z.literal(FINDINGS_FORMAT),
    title: z.string().min(1),
    /** The docs page whose table these findings feed (informational). */
    doc: z.string().optional(),
    /** `A..B` or `1,2,3`, as `--seeds` takes them. */
    seeds: z.string().min(1),
    runs: z
      .array(
        z
          .object({
            /** The run's directory under the findings' output directory, and its label in comparisons. */
            name: z.string().regex(RUN_NAME, 'lower-case letters, digits, _ . - (a directory name)'),
            experiment: z.string().min(1),
            /** Options as `--set key=value` gives them. */
            set: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
            /** `key=v1,v2,...` as `--sweep` takes it. */
            sweep: z.string().optional(),
          })
          .strict(),
      )
      .min(1),
    /** Paired comparisons B − A between two runs (neither a sweep), by seed; `metrics` as `labs compare --metric`. */
    comparisons: z
      .array(z.object({ a: z.string(), b: z.string(), metrics: z.array(z.string()).default([]) }).strict())
      .default([]),
  })
  .strict();

export type FindingsManifest = z.output<typeof Manifest>;
export type FindingsRun = FindingsManifest['runs'][number];

/**
 * The manifest in `data` (read from `file`), checked: the schema (unknown fields refused), run names
 * unique, every comparison naming two runs that are not sweeps. Errors: BAD_CLI naming the file and
 * the field (`runs[2].name`).
 */
export function parseFindings(data: unknown, file: string): FindingsManifest {
  const parsed = Manifest.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('') ?? '';
    throw new LabError('BAD_CLI', `${file}: ${field.replace(/^\./, '') || '(manifest)'}: ${issue?.message}`, {
      details: { file, field: field.replace(/^\./, '') },
    });
  }
  const m = parsed.data;
  const bad = (field: string, why: string) =>
    new LabError('BAD_CLI', `${file}: ${field}: ${why}`, { details: { file, field } });
  const byName = new Map<string, FindingsRun>();
  for (const [i, run] of m.runs.entries()) {
    if (byName.has(run.name)) throw bad(`runs[${i}].name`, `'${run.name}' names two runs`);
    byName.set(run.name, run);
  }
  for (const [i, c] of m.comparisons.entries()) {
    for (const side of ['a', 'b'] as const) {
      const run = byName.get(c[side]);
      if (!run) throw bad(`comparisons[${i}].${side}`, `no run is named '${c[side]}'`);
      if (run.sweep)
        throw bad(`comparisons[${i}].${side}`, `'${c[side]}' is a sweep; compare runs without --sweep`);
    }
  }
  return m;
}

/** A run's `--set` pairs: the manifest's, then `extra` (the command line's, which win). */
export function runSets(run: FindingsRun, extra: readonly string[]): string[] {
  return [...Object.entries(run.set).map(([k, v]) => `${k}=${String(v)}`), ...extra];
}
