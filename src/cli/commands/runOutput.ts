/**
 * Where `labs run` and `labs run --sweep` write, shared by both commands: the output places to check
 * and the output-directory lock. In its own file so that `run.ts` (which loads `sweep.ts` lazily)
 * and `sweep.ts` do not import each other.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lockOutputDir, type OutputLock } from '../outputLock.js';
import type { OutputPlace } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { shardOf } from './seedJobs.js';

/** How messages name the output directory when `--out` was not given. */
export const DEFAULT_OUT_FLAG = 'output directory (default; change with --out)';

/**
 * The places `labs run` (and `--sweep`) writes: the record's directory `dir` and the HTML page, as
 * `checkOutputPlaces` (../outputPlaces.ts) takes them. Returns the HTML path ('' resolved to `dir/report.html`).
 */
export function runOutputPlaces(
  p: Extract<ParsedCli, { command: 'run' }>,
  dir: string,
): { places: OutputPlace[]; htmlPath: string | null } {
  const htmlPath = p.html === '' ? join(dir, 'report.html') : p.html;
  const places: OutputPlace[] = [
    {
      flag: p.out ? '--out' : DEFAULT_OUT_FLAG,
      path: dir,
      kind: 'dir',
      files: p.html === '' ? ['record.json', 'report.html'] : ['record.json'],
    },
  ];
  if (p.html) places.push({ flag: '--html', path: p.html, kind: 'file' });
  return { places, htmlPath };
}

/**
 * Takes `dir` for this command ({@link lockOutputDir}), or, for a shard, nothing: the shards of one
 * job list write disjoint per-seed files into one shared directory at once (docs/scale-out.md) and no
 * aggregate record, so they hold no lock. A multi-seed command whose directory already has a plan
 * (`plan.json`) resumes it: seedJobs.ts refuses a plan that differs from this command's (a usage
 * error naming the option), and otherwise the aggregate record is rewritten from the same seeds, so
 * rewriting it is not the silent replacement the record rule is there to stop.
 */
export function takeOutputDir(
  p: Extract<ParsedCli, { command: 'run' }>,
  dir: string,
  flag: string,
): OutputLock | null {
  if (p.multi && shardOf(p)) return null;
  const resumes = p.multi && existsSync(join(dir, 'plan.json'));
  return lockOutputDir(dir, { flag, force: p.force || resumes });
}
