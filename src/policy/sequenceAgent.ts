/**
 * The neural policy as the prompted env's {@link TranscriptAgent}: it feeds every transcript token
 * (prompt, its own samples, the environment's output) into the model's incremental sampler and
 * draws each action from the model's next-token distribution at a temperature. The tabular context
 * the env offers is ignored: the model has to read the transcript.
 */
import type { TranscriptAgent } from '../envs/promptedArithmetic.js';
import type { Rng } from '../random.js';
import type { SequenceModel, SequenceSampler } from './sequenceModel.js';

export class SequenceAgent implements TranscriptAgent {
  private readonly sampler: SequenceSampler;
  private readonly rng: Rng;
  private readonly temperature: number;

  /**
   * `rng` draws the samples; `temperature` as {@link SequenceSampler.sample} (1: the model's own
   * distribution, which training log-probs refer to; 0: greedy). Calls `model.prepareGeneration()`:
   * create the agent after the last parameter update of a phase.
   */
  constructor(model: SequenceModel, rng: Rng, temperature = 1) {
    model.prepareGeneration();
    this.sampler = model.sampler();
    this.rng = rng;
    this.temperature = temperature;
  }

  start(prompt: readonly number[]): void {
    this.sampler.reset();
    for (const tok of prompt) this.sampler.feed(tok);
  }

  choose(_context: number): number {
    return this.sampler.sample(this.rng, this.temperature);
  }

  append(token: number): void {
    this.sampler.feed(token);
  }
}
