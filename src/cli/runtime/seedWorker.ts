/**
 * A worker thread of `labs run --seeds ... --jobs N` (see seedPool.ts). Its own entry point, so it
 * loads only the experiment registry, the named experiment (with what that imports) and the shared
 * counter and the curve-band statistics, never the CLI's grammar, reports or DuckDB. It starts
 * loading the experiment at once (while the main thread is still validating the options); for each
 * job it is sent (seeds to run, or curves to band across seeds), it claims items from the shared
 * counter until none is left (a seed only while it would finish it before the main thread could:
 * {@link SeedQueue.claimForWorker}), posting each result, or the error as plain data, as soon as it
 * is done, then posts 'done'. Every reply carries the job's id.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isLabError } from '../../core/errors.js';
import type { CurveItem } from '../../experiments/multiSeed.js';
import { loadExperiment } from '../../experiments/registry.js';
import { curveBands } from '../../experiments/seedStatistics.js';
import type { Experiment, JsonValue } from '../../experiments/types.js';
import type { PlainError, SeedJob, SeedReply, SeedWorkerData } from './seedPool.js';
import { coldSeedMs, SeedQueue } from './seedQueue.js';

const port = parentPort;
if (!port) throw new Error('seedWorker.mjs runs only as a worker thread');
const post = (reply: SeedReply) => port.postMessage(reply);
/** This thread's last seed, wall ms (0 until it has run one: its first is JIT-cold). */
let lastSeedMs = 0;

function plain(e: unknown): PlainError {
  return isLabError(e)
    ? { lab: true, code: e.code, message: e.message, details: e.details, stack: e.stack }
    : { lab: false, message: (e as Error)?.message ?? String(e), stack: (e as Error)?.stack };
}

const loading: Promise<Experiment> = loadExperiment((workerData as SeedWorkerData).experiment);
loading.catch(() => {}); // reported with the first job

port.on('message', async (job: SeedJob) => {
  let experiment: Experiment;
  try {
    experiment = await loading;
  } catch (e) {
    post({ job: job.id, type: 'done', loadError: plain(e) });
    return;
  }
  if (job.kind === 'bands') {
    // Each curve's band is a pure function of its series and key (streams forked by label).
    const queue = new SeedQueue(job.items.length, job.queue);
    for (let i = queue.claim(); i >= 0; i = queue.claim()) {
      const item = job.items[i] as CurveItem;
      try {
        const band = curveBands(item.series, item.key);
        queue.finish(false);
        post({ job: job.id, type: 'band', index: i, band });
      } catch (e) {
        queue.finish(true);
        post({ job: job.id, type: 'error', index: i, error: plain(e) });
      }
    }
    post({ job: job.id, type: 'done' });
    return;
  }
  const queue = new SeedQueue(job.tasks.length, job.queue);
  const expectedMs = () => (lastSeedMs > 0 ? lastSeedMs : coldSeedMs(queue.pace()));
  for (let i = queue.claimForWorker(expectedMs()); i >= 0; i = queue.claimForWorker(expectedMs())) {
    const task = job.tasks[i] as { config: number; seed: number };
    const t0 = performance.now();
    try {
      const record = await experiment.run(job.configs[task.config] as Record<string, JsonValue>, {
        seed: task.seed,
      });
      lastSeedMs = performance.now() - t0;
      // counted before it is posted, so the main thread's progress never lags the records it has
      queue.finish(false);
      post({ job: job.id, type: 'record', index: i, record });
    } catch (e) {
      queue.finish(true);
      post({ job: job.id, type: 'error', index: i, error: plain(e) });
    }
  }
  post({ job: job.id, type: 'done' });
});
