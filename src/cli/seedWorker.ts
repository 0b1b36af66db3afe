/**
 * A worker thread of `labs run --seeds ... --jobs N` (see seedPool.ts): loads the experiment named in
 * `workerData` once, then runs each seed it is sent and posts back the record, or the error as plain
 * data (a LabError's code, message and details; any other error's message and stack).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isLabError } from '../core/errors.js';
import { loadExperiment } from '../experiments/registry.js';
import type { SeedRequest, SeedWorkerData } from './seedPool.js';

const { experiment: name, config } = workerData as SeedWorkerData;
const port = parentPort;
if (!port) throw new Error('seedWorker.js runs only as a worker thread');
const experiment = await loadExperiment(name);
port.on('message', async ({ seed }: SeedRequest) => {
  try {
    port.postMessage({ ok: true, record: await experiment.run(config, { seed }) });
  } catch (e) {
    const error = isLabError(e)
      ? { lab: true, code: e.code, message: e.message, details: e.details, stack: e.stack }
      : { lab: false, message: (e as Error)?.message ?? String(e), stack: (e as Error)?.stack };
    port.postMessage({ ok: false, error });
  }
});
