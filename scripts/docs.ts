/**
 * `npm run docs`: rewrites every generated table in README.md and docs/ from the records it names
 * (see scripts/docsTables.ts for the marker format).
 *
 *     npm run docs                 # re-render the tables from the checked-in records
 *     npm run docs -- --check      # exit 1 and name the files whose tables are stale
 *     npm run docs -- --records    # first re-run the experiments behind docs/records/ (seed 7,
 *                                  # defaults; a few seconds each), then re-render
 *
 * A record in docs/records/ is what `labs run --experiment NAME --seed 7 --json` (or the `labs audit`
 * of the example dump, `DOC_RECORDS`) prints, trimmed to
 * stay small: curves kept only at the updates in CURVE_CHECKPOINTS, plots and wall-clock timing
 * dropped (timing differs run to run), and `_command` added so the docs can cite the command.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CURVE_CHECKPOINTS, renderDocument } from './docsTables.js';

/** The records behind the docs: file in docs/records/, and the `labs` arguments that produce it. */
export const DOC_RECORDS: { file: string; args: string[] }[] = [
  ...['agent', 'rollout', 'advantage', 'mask', 'aggregation', 'truncation'].map((name) => ({
    file: `${name}-seed7.json`,
    args: ['run', '--experiment', name, '--seed', '7'],
  })),
  // minutes, not seconds: 18 warm-started GRU trainings (docs/experiments/mismatch.md)
  { file: 'mismatch-seed7.json', args: ['run', '--experiment', 'mismatch', '--seed', '7'] },
  {
    file: 'audit-generic-example.json',
    args: ['audit', 'examples/generic-rollouts.jsonl', '--preset', 'generic'],
  },
];

/** README.md and every markdown file under docs/, relative to the repository root, sorted. */
export function markdownFiles(root: string): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk('docs');
  return out.sort();
}

/** A run record trimmed for docs/records/ (see the header). */
export function trimRecord(record: Record<string, unknown>, command: string): Record<string, unknown> {
  const { plots: _plots, timing: _timing, curves, ...rest } = record;
  const out: Record<string, unknown> = { _command: command, ...rest };
  const c = curves as Record<string, unknown[]> | undefined;
  if (c && Array.isArray(c.update) && c.update.length > 0) {
    const keep = c.update.flatMap((u, i) => (CURVE_CHECKPOINTS.includes(u as number) ? [i] : []));
    out.curves = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, keep.map((i) => v[i])]));
  }
  return out;
}

function refreshRecords(root: string): void {
  for (const { file, args } of DOC_RECORDS) {
    const extra = args[0] === 'run' ? ['--no-progress'] : [];
    const json = execFileSync('npx', ['tsx', 'src/cli/main.ts', ...args, '--json', ...extra], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    const record = trimRecord(JSON.parse(json), `labs ${args.join(' ')}`);
    writeFileSync(join(root, 'docs/records', file), `${JSON.stringify(record, null, 1)}\n`);
    process.stdout.write(`docs/records/${file}\n`);
  }
}

function main(): void {
  const root = process.cwd();
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  if (args.includes('--records')) refreshRecords(root);
  const readJson = (p: string) => JSON.parse(readFileSync(join(root, p), 'utf8'));
  const stale: string[] = [];
  for (const file of markdownFiles(root)) {
    const before = readFileSync(join(root, file), 'utf8');
    const after = renderDocument(before, file, readJson);
    if (after === before) continue;
    stale.push(file);
    if (!check) writeFileSync(join(root, file), after);
  }
  if (check && stale.length > 0) {
    process.stderr.write(`stale generated tables in: ${stale.join(', ')} (run npm run docs)\n`);
    process.exit(1);
  }
  process.stdout.write(stale.length ? `rewrote ${stale.join(', ')}\n` : 'docs tables up to date\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
