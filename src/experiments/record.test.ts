import { describe, expect, it } from 'vitest';
import { recordOf, startRecord } from './record.js';
import { VERSION } from './version.js';

describe('recordOf', () => {
  const body = { metrics: { a: 1 }, curves: { update: [1] }, tables: { arms: [{ arm: 'x' }] } };

  it('writes the envelope in the order of every record: experiment, seed, version, config, body, timing', () => {
    const r = recordOf(
      'demo',
      { lr: 0.1 },
      3,
      { ...body, plots: { a: { title: 't', y: 'y' } }, notes: ['n'] },
      5,
    );
    expect(Object.keys(r)).toEqual([
      'experiment',
      'seed',
      'version',
      'config',
      'metrics',
      'curves',
      'tables',
      'notes',
      'plots',
      'timing',
    ]);
    expect(r).toMatchObject({ experiment: 'demo', seed: 3, version: VERSION, config: { lr: 0.1 } });
    expect(r.timing).toEqual({ wall_ms: 5 });
  });

  it('leaves out notes and plots when the body has none (no `undefined` keys)', () => {
    const r = recordOf('demo', {}, 1, body, 0);
    expect(Object.keys(r)).not.toContain('notes');
    expect(Object.keys(r)).not.toContain('plots');
  });

  it('startRecord times the run from when it was opened', async () => {
    const open = startRecord('demo', {}, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const r = open.finish(body);
    expect(r.timing.wall_ms).toBeGreaterThanOrEqual(15);
    expect(r.experiment).toBe('demo');
  });
});
