/**
 * Discrete-event simulation of W rollout workers and one trainer, in simulated seconds (never the
 * wall clock). It decides only WHEN things happen and WHICH policy version each piece of work uses;
 * what a group contains and how the trainer learns from it are supplied by {@link SimHooks}
 * (see `asyncLearner.ts`), so the schedule can be tested on its own against a hand-computed timeline.
 *
 * Model:
 * - A unit of rollout work is one GROUP (G samples of one task, as a GRPO prompt group). Each of the
 *   W workers generates one group at a time with the newest weights PUBLISHED when it starts, and
 *   keeps that version for the whole group (no partial rollout / in-flight weight update). The
 *   group's generation time is whatever `hooks.generate` returns (long-tailed in the experiment).
 * - Finished groups enter a FIFO queue in completion order. The trainer, when idle, takes the first
 *   K = `groupsPerBatch` groups, trains for `trainStepTime` seconds, and its version goes from k to
 *   k+1 at the end of the step. Version k+1 becomes visible to workers `publishDelay` seconds later.
 * - Version lag of a consumed group = trainer version at consumption - the group's behaviour version.
 *
 * Modes (`mode`):
 * - `sync`: a worker may start a group only while fewer than K groups exist for the published version
 *   and the trainer has consumed all earlier ones: generate K groups, train, publish, repeat. Every
 *   lag is 0. (This is the `bounded` admission rule below with eta = 0.)
 * - `bounded`: AReaL's admission rule (`rollout.max_head_offpolicyness` = eta): a worker may start
 *   a group only while `started - rejected < (eta + v_published + 1) * K`, i.e. stale work is NEVER
 *   STARTED. Because groups finish out of order, a long group can still be consumed more than eta
 *   versions after it started; to make the bound hard, such groups are DROPPED AT CONSUMPTION (and
 *   counted as rejected, which frees admission capacity). Both counts are reported, so the run shows
 *   how much the admission rule alone leaves to the drop.
 * - `admission`: AReaL's admission rule alone, without the drop: what a count-based bound lets through
 *   when groups finish out of order (consumed lags can exceed eta). `dropBeyond` applies as below.
 * - `unbounded`: no admission limit. With `dropBeyond` set, groups with lag > dropBeyond are dropped
 *   at consumption (the `drop` correction: generated, then discarded); with null, all are consumed.
 *
 * Ties at equal simulated time are resolved deterministically: completions (in start order), then the
 * trainer's step end, then publications; then the trainer tries to start a step, then idle workers
 * start groups in worker order.
 */
import { LabError } from '../core/errors.js';

export type RolloutMode = 'sync' | 'bounded' | 'admission' | 'unbounded';

export interface EventSimOptions {
  mode: RolloutMode;
  /** `bounded`: the largest allowed version lag; `admission`: the eta of the admission rule. Default 2. */
  eta?: number;
  /** `unbounded`/`admission`: drop at consumption any group with lag > dropBeyond; null keeps all. Default null. */
  dropBeyond?: number | null;
  /** W concurrent rollout workers, each generating one group at a time. Default 48 (see EVENT_SIM_DEFAULTS). */
  workers?: number;
  /** K groups consumed per trainer step. Default 16. */
  groupsPerBatch?: number;
  /** Number of trainer steps to simulate; the run ends when the last one finishes. Default 150. */
  updates?: number;
  /** Simulated seconds per trainer step. Default 3 (see EVENT_SIM_DEFAULTS). */
  trainStepTime?: number;
  /** Simulated seconds from the end of a step until workers can load the new version. Default 0.5. */
  publishDelay?: number;
}

/**
 * The defaults of the simulation, which the `rollout` experiment's options also use (one source): 48
 * workers and a 3 s step make generation the bottleneck of `sync` (its batch waits for its slowest
 * group) while the async trainer is busy most of the time, with K = 16 groups per step.
 */
export const EVENT_SIM_DEFAULTS: Required<EventSimOptions> = Object.freeze({
  mode: 'bounded',
  eta: 2,
  dropBeyond: null,
  workers: 48,
  groupsPerBatch: 16,
  updates: 150,
  trainStepTime: 3,
  publishDelay: 0.5,
});

export type GroupStatus = 'running' | 'queued' | 'consumed' | 'dropped';

/** One started group and what became of it. */
export interface GroupRecord {
  /** 0, 1, 2, ... in start order (also the order `hooks.generate` is called in). */
  id: number;
  worker: number;
  /** The published policy version the worker held when it started the group (behaviour version). */
  version: number;
  start: number;
  /** Completion time (start + generation time); may lie beyond the end of the run. */
  end: number;
  status: GroupStatus;
  /** Index of the trainer step that consumed or dropped it; -1 if neither happened. */
  update: number;
  /** Trainer version minus behaviour version when consumed or dropped; -1 if neither happened. */
  lag: number;
}

export interface UpdateRecord {
  index: number;
  /** The trainer's version during the step (it becomes index + 1 at `end`); equals `index`. */
  version: number;
  start: number;
  end: number;
  /** Group ids consumed by this step, in queue (completion) order. */
  groups: number[];
  /** Group ids dropped as too stale when this step took its batch. */
  dropped: number[];
  /** Finished groups waiting in the queue just before the batch was taken. */
  queueLength: number;
}

export interface GenerateRequest {
  id: number;
  version: number;
  worker: number;
  start: number;
}

export interface TrainRequest {
  index: number;
  version: number;
  start: number;
  groups: readonly GroupRecord[];
}

export interface SimHooks {
  /** Produce group `id` with policy `version`; return its generation time in simulated seconds (> 0). */
  generate(request: GenerateRequest): number;
  /** Train one step from `version` on `groups` (their `lag` is set); called when the step starts. */
  train(request: TrainRequest): void;
}

export interface SimResult {
  options: Required<EventSimOptions>;
  /** End of the last trainer step: the length of the simulated run, seconds. */
  endTime: number;
  groups: GroupRecord[];
  updates: UpdateRecord[];
  /** Seconds the trainer spent training (updates * trainStepTime). */
  trainerBusy: number;
  /** Worker-seconds spent generating within [0, endTime] (summed over workers). */
  workerBusy: number;
  /** Worker-seconds spent on groups that were later dropped. */
  workerWasted: number;
  /** 1 - trainerBusy / endTime. */
  trainerIdle: number;
  /** 1 - workerBusy / (workers * endTime). */
  workerIdle: number;
  /** Largest number of finished groups waiting in the queue at any step start. */
  maxQueue: number;
  consumed: number;
  dropped: number;
  /** Times at which versions 1..updates became visible to workers (index v-1). */
  publishTimes: number[];
}

type EventKind = 0 | 1 | 2; // 0 completion, 1 step end, 2 publication (processing order at equal times)
interface SimEvent {
  time: number;
  kind: EventKind;
  /** group id (completion), update index (step end), version (publication). */
  ref: number;
  seq: number;
}

function checkOptions(o: Required<EventSimOptions>): void {
  const positiveInt = (v: number, field: string) => {
    if (!Number.isInteger(v) || v <= 0) {
      throw new LabError('BAD_ARGUMENT', `eventSim: ${field} must be a positive integer, got ${v}`, {
        details: { field, value: v },
      });
    }
  };
  positiveInt(o.workers, 'workers');
  positiveInt(o.groupsPerBatch, 'groupsPerBatch');
  positiveInt(o.updates, 'updates');
  if (!(Number.isFinite(o.trainStepTime) && o.trainStepTime > 0)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `eventSim: trainStepTime must be > 0 seconds, got ${o.trainStepTime}`,
      {
        details: { field: 'trainStepTime', value: o.trainStepTime },
      },
    );
  }
  if (!(Number.isFinite(o.publishDelay) && o.publishDelay >= 0)) {
    throw new LabError('BAD_ARGUMENT', `eventSim: publishDelay must be >= 0 seconds, got ${o.publishDelay}`, {
      details: { field: 'publishDelay', value: o.publishDelay },
    });
  }
  if (!(o.mode === 'sync' || o.mode === 'bounded' || o.mode === 'admission' || o.mode === 'unbounded')) {
    throw new LabError(
      'UNKNOWN_MODE',
      `eventSim: mode must be sync, bounded, admission or unbounded, got '${o.mode}'`,
      {
        details: { field: 'mode', value: o.mode },
      },
    );
  }
  if (!Number.isInteger(o.eta) || o.eta < 0) {
    throw new LabError('BAD_ARGUMENT', `eventSim: eta must be an integer >= 0, got ${o.eta}`, {
      details: { field: 'eta', value: o.eta },
    });
  }
  if (o.dropBeyond !== null && (!Number.isInteger(o.dropBeyond) || o.dropBeyond < 0)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `eventSim: dropBeyond must be null or an integer >= 0, got ${o.dropBeyond}`,
      {
        details: { field: 'dropBeyond', value: o.dropBeyond },
      },
    );
  }
}

/**
 * Runs the simulation to the end of step `updates` and returns the full schedule. Deterministic:
 * the only inputs are the options and what the hooks return.
 *
 * Why one long function: it is a discrete-event loop whose handlers (`startTrainerIfPossible`,
 * `admits`, `startWorkersIfPossible` and the event cases of the loop) read and write the same
 * simulation state: the clock, the event list, the queue, the trainer and published versions, the
 * step and rejection counters, the busy workers and the drops pending for the next step. Split into
 * module functions they would pass over a dozen mutable variables back and forth (or a state object
 * standing for all of them); as closures over one scope each handler reads as the rule it applies.
 * The summary after the run, which needs none of that state, is `summarizeSchedule`.
 */
export function simulateRollout(options: EventSimOptions, hooks: SimHooks): SimResult {
  const o: Required<EventSimOptions> = { ...EVENT_SIM_DEFAULTS, ...options };
  checkOptions(o);
  const K = o.groupsPerBatch;
  // The lag bound enforced at consumption (null: none). sync never needs it (all lags are 0).
  const dropBeyond = o.mode === 'bounded' ? o.eta : o.mode === 'sync' ? null : o.dropBeyond;
  // Admission: groups that may exist (started minus rejected) for a published version v; sync = eta 0.
  const admissionEta = o.mode === 'sync' ? 0 : o.mode === 'unbounded' ? null : o.eta;

  const events: SimEvent[] = [];
  let seq = 0;
  const push = (time: number, kind: EventKind, ref: number) => {
    const ev: SimEvent = { time, kind, ref, seq: seq++ };
    // Few events are pending at once (<= workers + 2): sorted insertion is simplest and exact.
    let i = events.length;
    while (i > 0) {
      const p = events[i - 1] as SimEvent;
      if (
        p.time < ev.time ||
        (p.time === ev.time && (p.kind < ev.kind || (p.kind === ev.kind && p.seq < ev.seq)))
      )
        break;
      i--;
    }
    events.splice(i, 0, ev);
  };

  const groups: GroupRecord[] = [];
  const updates: UpdateRecord[] = [];
  const publishTimes: number[] = [];
  const workerBusyWith: number[] = new Array(o.workers).fill(-1);
  const queue: number[] = [];
  let trainerVersion = 0;
  let publishedVersion = 0;
  let trainerBusy = false;
  let stepsStarted = 0;
  let stepsDone = 0;
  let rejected = 0;
  let maxQueue = 0;
  let now = 0;
  // Groups dropped while the trainer waited for a full batch; listed on the step that follows.
  const pendingDrops: number[] = [];

  const startTrainerIfPossible = () => {
    if (trainerBusy || stepsStarted >= o.updates) return;
    const dropped: number[] = [];
    if (dropBeyond !== null) {
      for (let i = queue.length - 1; i >= 0; i--) {
        const g = groups[queue[i] as number] as GroupRecord;
        if (trainerVersion - g.version > dropBeyond) {
          g.status = 'dropped';
          g.update = stepsStarted;
          g.lag = trainerVersion - g.version;
          dropped.unshift(g.id);
          queue.splice(i, 1);
          rejected += 1;
        }
      }
    }
    const queueLength = queue.length + dropped.length;
    if (queue.length < K) {
      pendingDrops.push(...dropped);
      return;
    }
    const batchIds = queue.splice(0, K);
    const batch = batchIds.map((id) => {
      const g = groups[id] as GroupRecord;
      g.status = 'consumed';
      g.update = stepsStarted;
      g.lag = trainerVersion - g.version;
      return g;
    });
    const allDropped = [...pendingDrops, ...dropped];
    pendingDrops.length = 0;
    maxQueue = Math.max(maxQueue, queueLength);
    const record: UpdateRecord = {
      index: stepsStarted,
      version: trainerVersion,
      start: now,
      end: now + o.trainStepTime,
      groups: batchIds,
      dropped: allDropped,
      queueLength,
    };
    updates.push(record);
    hooks.train({ index: stepsStarted, version: trainerVersion, start: now, groups: batch });
    trainerBusy = true;
    push(record.end, 1, stepsStarted);
    stepsStarted += 1;
  };

  const admits = (): boolean => {
    if (admissionEta === null) return true;
    const live = groups.length - rejected;
    return live < (admissionEta + publishedVersion + 1) * K;
  };

  const startWorkersIfPossible = () => {
    for (let w = 0; w < o.workers; w++) {
      if (workerBusyWith[w] !== -1) continue;
      if (!admits()) return;
      const id = groups.length;
      const duration = hooks.generate({ id, version: publishedVersion, worker: w, start: now });
      if (!(Number.isFinite(duration) && duration > 0)) {
        throw new LabError(
          'BAD_VALUE',
          `eventSim: generation time of group ${id} must be a finite number > 0 seconds, got ${duration}`,
          { details: { field: 'duration', row: id, value: duration } },
        );
      }
      groups.push({
        id,
        worker: w,
        version: publishedVersion,
        start: now,
        end: now + duration,
        status: 'running',
        update: -1,
        lag: -1,
      });
      workerBusyWith[w] = id;
      push(now + duration, 0, id);
    }
  };

  const dispatch = () => {
    startTrainerIfPossible();
    startWorkersIfPossible();
  };

  dispatch();
  while (stepsDone < o.updates) {
    const first = events[0];
    if (first === undefined) {
      throw new LabError(
        'BAD_ARGUMENT',
        `eventSim: the schedule stalled after ${stepsDone} of ${o.updates} steps (nothing left to happen)`,
        { details: { field: 'mode', stepsDone } },
      );
    }
    now = first.time;
    // Process every event at this instant, including ones pushed for the same instant (zero delay).
    while (events.length > 0 && (events[0] as SimEvent).time === now) {
      const ev = events.shift() as SimEvent;
      if (ev.kind === 0) {
        const g = groups[ev.ref] as GroupRecord;
        g.status = 'queued';
        queue.push(g.id);
        workerBusyWith[g.worker] = -1;
      } else if (ev.kind === 1) {
        trainerBusy = false;
        trainerVersion += 1;
        stepsDone += 1;
        push(now + o.publishDelay, 2, trainerVersion);
      } else {
        publishedVersion = Math.max(publishedVersion, ev.ref);
        publishTimes[ev.ref - 1] = now;
      }
    }
    if (stepsDone < o.updates) dispatch();
  }

  return summarizeSchedule(o, now, groups, updates, maxQueue, publishTimes);
}

/**
 * The result of a finished run ending at `endTime`: worker time spent (within the run) and wasted
 * (on dropped groups), idle fractions of the trainer and workers, and the consumed/dropped counts.
 */
function summarizeSchedule(
  o: Required<EventSimOptions>,
  endTime: number,
  groups: GroupRecord[],
  updates: UpdateRecord[],
  maxQueue: number,
  publishTimes: number[],
): SimResult {
  let workerBusy = 0;
  let workerWasted = 0;
  let consumed = 0;
  let droppedCount = 0;
  for (const g of groups) {
    const busy = Math.max(0, Math.min(g.end, endTime) - g.start);
    workerBusy += busy;
    if (g.status === 'dropped') {
      workerWasted += g.end - g.start;
      droppedCount += 1;
    }
    if (g.status === 'consumed') consumed += 1;
  }
  const trainerBusyTime = o.updates * o.trainStepTime;
  return {
    options: o,
    endTime,
    groups,
    updates,
    trainerBusy: trainerBusyTime,
    workerBusy,
    workerWasted,
    trainerIdle: 1 - trainerBusyTime / endTime,
    workerIdle: 1 - workerBusy / (o.workers * endTime),
    maxQueue,
    consumed,
    dropped: droppedCount,
    publishTimes,
  };
}
