// Every manifest in docs/findings/ is valid and every run's options resolve for its experiment, so
// `labs findings NAME` would not fail on its manifest after hours of runs (nothing is run here).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSeeds } from '../src/cli/parse.js';
import { checkPhaseSeeds, isFindingsV2, parseFindings, runSets } from '../src/experiments/findings.js';
import { resolveConfig } from '../src/experiments/options.js';
import { loadExperiment } from '../src/experiments/registry.js';
import { sweepConfigs } from '../src/experiments/sweep.js';
import { parseSweep } from '../src/experiments/sweepSpec.js';

const dir = join('docs', 'findings');
const manifests = readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith('.results.json'));

describe('docs/findings manifests', () => {
  it('there is at least one', () => expect(manifests.length).toBeGreaterThan(0));

  it.each(manifests)('%s parses and its runs resolve', async (name) => {
    const file = join(dir, name);
    const m = parseFindings(JSON.parse(readFileSync(file, 'utf8')), file);
    if (isFindingsV2(m)) checkPhaseSeeds(parseSeeds(m.discovery), parseSeeds(m.confirmation), file);
    for (const run of m.runs) {
      const experiment = await loadExperiment(run.experiment);
      const sets = runSets(run, []);
      const configs = run.sweep
        ? sweepConfigs(experiment, sets, parseSweep(run.sweep))
        : [resolveConfig(experiment, sets)];
      // a list option is given as its JSON text (`sections: '["curriculum"]'`), as --set takes it
      const want = (v: unknown) => (typeof v === 'string' && v.startsWith('[') ? JSON.parse(v) : v);
      for (const c of configs) for (const [k, v] of Object.entries(run.set)) expect(c[k]).toEqual(want(v));
    }
  });
});
