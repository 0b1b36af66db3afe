/**
 * One timed child of bench/pool/libraries.ts: runs seeds 1..N of experiment NAME (defaults, or
 * `--set` pairs) one way, `node child.mjs MODE NAME N [k=v ...]`, and writes the sha-256 of the
 * records (timing fields left out) to stderr, so the runner can check every way gives the same bytes.
 * MODE: `serial` (this thread alone), `project` (the project's pool, src/cli/runtime/seedPool.ts, with one
 * worker started once the pace shows it pays: the default `--jobs`), `project-now` (the same with the
 * worker started at once: `--jobs 2`), `tinypool-wK` or `piscina-wK` (K workers of that library, this
 * thread only sending tasks and collecting records; the libraries are resolved from
 * LABS_POOL_LIBS, a directory with a node_modules holding them).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startSeedPool } from '../../src/cli/runtime/seedPool.js';
import { worthStartingWorkers } from '../../src/cli/runtime/seedQueue.js';
import { resolveConfig } from '../../src/experiments/options.js';
import { loadExperiment } from '../../src/experiments/registry.js';
import type { Experiment, JsonValue, RunRecord } from '../../src/experiments/types.js';

const [mode = 'serial', name = 'agent', count = '4', ...sets] = process.argv.slice(2);
const n = Number(count);
const here = process.env.LABS_POOL_BUILD as string;
const seeds = Array.from({ length: n }, (_, i) => i + 1);

/** A started pool of a kept library: `run` one task, `close`. */
async function libraryPool(lib: string, threads: number) {
  const filename = pathToFileURL(join(here, 'worker.mjs')).href;
  const resolved = createRequire(join(process.env.LABS_POOL_LIBS as string, 'x.js')).resolve(lib);
  const mod = (await import(pathToFileURL(resolved).href)) as Record<string, unknown>;
  type Pool = { run(task: unknown): Promise<unknown>; destroy(): Promise<void> };
  const Ctor = (lib === 'tinypool' ? mod.default : (mod.Piscina ?? mod.default)) as new (o: object) => Pool;
  return new Ctor({ filename, minThreads: threads, maxThreads: threads });
}

let records: RunRecord[];
let close = async () => {};
if (mode === 'serial') {
  const experiment = (await loadExperiment(name)) as Experiment;
  const config = resolveConfig(experiment, sets) as Record<string, JsonValue>;
  records = [];
  for (const seed of seeds) records.push(await experiment.run(config, { seed }));
} else if (mode === 'project' || mode === 'project-now') {
  // as `labs run --seeds` does: the pool first, so a worker started at once loads meanwhile
  const pool = startSeedPool(
    pathToFileURL(join(here, 'cli', 'seedWorker.mjs')),
    name,
    1,
    mode === 'project-now' ? 'now' : worthStartingWorkers,
  );
  close = () => pool.close();
  const experiment = (await loadExperiment(name)) as Experiment;
  const config = resolveConfig(experiment, sets) as Record<string, JsonValue>;
  const outcomes = await pool.runner(experiment).runAll(seeds.map((seed) => ({ config, seed })));
  records = outcomes.map((o) => {
    if (!o?.ok) throw o?.error ?? new Error('a seed has no outcome');
    return o.record;
  });
} else {
  const [lib = '', threads = '1'] = mode.split('-w');
  const pool = await libraryPool(lib, Number(threads));
  close = () => pool.destroy();
  const experiment = (await loadExperiment(name)) as Experiment;
  const config = resolveConfig(experiment, sets) as Record<string, JsonValue>;
  records = (await Promise.all(seeds.map((seed) => pool.run({ name, config, seed })))) as RunRecord[];
}
const bytes = JSON.stringify(records.map(({ timing: _, ...rest }) => rest));
process.stderr.write(`records ${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}\n`);
// Not awaited at the top level: the project's close() can stay unsettled when a worker still holds
// a job the main thread stopped waiting for (the process then ends when its event loop empties, as
// the CLI does; an unsettled top-level await would make that exit code 13).
close().then(() => process.exit(0));
