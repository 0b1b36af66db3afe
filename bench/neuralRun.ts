/**
 * One 150-update token-lab arm with the neural policy (defaults: 16 tasks x 8 samples per update =
 * 19,200 trajectories, 2 PPO epochs, then the 400-task evaluation), run in its own process by
 * bench/neural.bench.ts so that its peak RSS is its own. Prints one JSON line:
 * `{ ms, cpu_ms, max_rss_mb, rss_source, trajectories, tokens, eval_success }` (cpu_ms: this
 * process's CPU time, import included: on a shared machine the wall time also counts waiting for a
 * core; max_rss_mb: this process's own peak, see peakRss.ts).
 */

import { mask } from '../src/experiments/mask/mask.js';
import { resolveConfig } from '../src/experiments/options.js';
import { runTokenArm } from '../src/experiments/tokenLab.js';
import { ownPeakRssMb } from './peakRss.js';

const cfg = resolveConfig(mask, ['policy=neural']);
const t0 = performance.now();
const r = runTokenArm(
  { arm: 'correct', maskRule: 'model_tokens', lossAggMode: 'token-mean', truncation: 'zero_score' },
  cfg,
  7,
);
const ms = performance.now() - t0;
const cpu = process.cpuUsage();
const peak = ownPeakRssMb();
let trajectories = 0;
let tokens = 0;
for (const u of r.updates) {
  trajectories += u.trajectories;
  tokens += u.meanLength * u.trajectories;
}
console.log(
  JSON.stringify({
    ms,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    max_rss_mb: peak.mb,
    rss_source: peak.source,
    trajectories,
    tokens: Math.round(tokens),
    eval_success: r.evaluation.success,
  }),
);
