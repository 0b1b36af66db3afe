/**
 * `--jobs N`: a kept pool of N worker threads (node:worker_threads), each running whole seeds of one
 * experiment. Seeds are independent and every random draw comes from the seed's own stream, so a
 * seed's record is the same on any thread; records cross back by structured clone, which keeps every
 * number bit for bit (NaN, -0 and Infinity included).
 *
 * The workers load the built `seedWorker.js` next to the running CLI. Run from source (tsx), there is
 * no such file (tsx's loader does not reach worker threads on Node 20), and the seeds run serially on
 * the main thread instead: {@link seedWorkerUrl} then returns null.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LabError, type LabErrorCode } from '../core/errors.js';
import type { SeedRunner } from '../experiments/multiSeed.js';
import type { JsonValue, RunRecord } from '../experiments/types.js';

/** What every worker is started with. */
export interface SeedWorkerData {
  experiment: string;
  config: Record<string, JsonValue>;
}

/** One seed to run. */
export interface SeedRequest {
  seed: number;
}

type SeedReply =
  | { ok: true; record: RunRecord }
  | {
      ok: false;
      error: {
        lab: boolean;
        code?: LabErrorCode;
        message: string;
        details?: Record<string, unknown>;
        stack?: string;
      };
    };

/** The built worker next to this module (dist/cli/seedWorker.js), or null when running from source. */
export function seedWorkerUrl(): URL | null {
  const url = new URL('./seedWorker.js', import.meta.url);
  if (!import.meta.url.endsWith('.js') || !existsSync(fileURLToPath(url))) return null;
  return url;
}

/** The error a worker reported, rebuilt on this thread (a LabError keeps its code and details). */
function rebuild(error: Extract<SeedReply, { ok: false }>['error']): Error {
  const e =
    error.lab && error.code
      ? new LabError(error.code, error.message, error.details ? { details: error.details } : {})
      : new Error(error.message);
  if (error.stack) e.stack = error.stack;
  return e;
}

/** A {@link SeedRunner} over `jobs` worker threads; `close()` ends them (always call it). */
export function createSeedPool(
  workerUrl: URL,
  jobs: number,
  data: SeedWorkerData,
): SeedRunner & { close(): Promise<void> } {
  const idle: Worker[] = [];
  const waiting: ((w: Worker) => void)[] = [];
  const all: Worker[] = [];
  const dead = new Set<Worker>();
  for (let i = 0; i < jobs; i++) {
    const w = new Worker(workerUrl, { workerData: data });
    // A worker that dies outside a seed (e.g. failing to load) must not go unnoticed.
    w.unref();
    w.on('exit', () => dead.add(w));
    w.on('error', () => dead.add(w));
    all.push(w);
    idle.push(w);
  }
  const acquire = (): Promise<Worker> => {
    const w = idle.pop();
    return w ? Promise.resolve(w) : new Promise((resolve) => waiting.push(resolve));
  };
  const release = (w: Worker): void => {
    const next = waiting.shift();
    if (next) next(w);
    else idle.push(w);
  };
  return {
    jobs,
    async run(seed: number): Promise<RunRecord> {
      const w = await acquire();
      if (dead.has(w)) {
        release(w);
        throw new Error(`a worker thread stopped before seed ${seed} could run`);
      }
      w.ref();
      try {
        return await new Promise<RunRecord>((resolve, reject) => {
          const onMessage = (reply: SeedReply) => {
            cleanup();
            if (reply.ok) resolve(reply.record);
            else reject(rebuild(reply.error));
          };
          const onError = (e: Error) => {
            cleanup();
            reject(e);
          };
          const onExit = (code: number) => {
            cleanup();
            reject(new Error(`worker thread exited with code ${code} while running seed ${seed}`));
          };
          const cleanup = () => {
            w.off('message', onMessage);
            w.off('error', onError);
            w.off('exit', onExit);
          };
          w.on('message', onMessage);
          w.on('error', onError);
          w.on('exit', onExit);
          w.postMessage({ seed } satisfies SeedRequest);
        });
      } finally {
        w.unref();
        release(w);
      }
    },
    async close() {
      await Promise.all(all.map((w) => w.terminate()));
    },
  };
}
