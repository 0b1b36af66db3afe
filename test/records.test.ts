// Results as tested data: every experiment's fixture record (test/fixtures/records/<name>.json,
// written by `npm run fixtures`) is rerun at its small config and compared on metrics and tables
// within the fixture's tolerance, and every option default is compared exactly. A change that moves
// a number or a default fails here until the fixture is deliberately regenerated.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { experimentNames } from '../src/experiments/registry.js';
import { buildFixture, differences, FIXTURE_DIR, type FixtureFile } from './support/fixtureRecords.js';

const REGENERATE = 'deliberate change? regenerate with `npm run fixtures` and say why in the commit';

function readFixture(name: string): FixtureFile {
  return JSON.parse(readFileSync(join(FIXTURE_DIR, `${name}.json`), 'utf8')) as FixtureFile;
}

describe.each(experimentNames())('fixture record of %s', (name) => {
  let expected: FixtureFile;
  let actual: FixtureFile;
  beforeAll(async () => {
    expected = readFixture(name);
    actual = await buildFixture(name, expected.overrides, expected.seeds);
  });

  it('has the same option defaults', () => {
    expect(actual.defaults, REGENERATE).toEqual(expected.defaults);
  });

  it('gives the same metrics and tables within the stated tolerance', () => {
    expect(expected.runs.length).toBeGreaterThan(0);
    expect(Object.keys(expected.runs[0]?.metrics ?? {}).length).toBeGreaterThan(0);
    const diff = differences(expected.runs, actual.runs, expected.tolerance, 'runs');
    expect(diff, `${name}: ${REGENERATE}\n${diff.join('\n')}`).toEqual([]);
  });
});

describe('differences (the fixture comparison)', () => {
  const tol = { relative: 1e-9, absolute: 1e-12 };
  it('accepts numbers within the tolerance and reports those beyond it, with their path', () => {
    expect(differences({ a: [1, 2] }, { a: [1 + 1e-12, 2] }, tol)).toEqual([]);
    expect(differences({ a: [1, 2] }, { a: [1, 2.001] }, tol)).toEqual(['.a[1]: expected 2, got 2.001']);
  });

  it('compares strings, null and NaN markers exactly and reports missing or added keys', () => {
    expect(differences({ s: 'NaN' }, { s: 0 }, tol)).toHaveLength(1);
    expect(differences({ s: null }, { s: null }, tol)).toEqual([]);
    expect(differences({ a: 1 }, { b: 1 }, tol)).toEqual(['.a: missing', '.b: not in the fixture']);
  });
});
