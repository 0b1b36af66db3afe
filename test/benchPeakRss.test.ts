// The bench's child peak RSS must be the child's own, not the high-water mark Linux carries over
// from the parent that spawned it (which made the neural row read 677 MB for a 117 MB run).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const bench = join(import.meta.dirname, '..', 'bench');

describe.runIf(existsSync('/proc/self/status'))('ownPeakRssMb', () => {
  it('reports a spawned child its own peak, not its parent high-water mark', () => {
    // A parent holding 160 MB of touched pages spawns the child: getrusage's maxRSS inherits them.
    const parent = `const held = Buffer.alloc(160 * 1048576, 1);
      const out = require('node:child_process').execFileSync(process.execPath,
        ['--import', 'tsx', ${JSON.stringify(join(bench, 'peakRssProbe.ts'))}], { encoding: 'utf8' });
      process.stdout.write(out + held.length);`;
    const printed = execFileSync(process.execPath, ['-e', parent], { encoding: 'utf8' });
    const child = JSON.parse(printed.split('\n')[0] as string) as {
      own: { mb: number; source: string };
      maxRss: number;
    };
    expect(child.own.source).toBe('VmHWM');
    expect(child.maxRss).toBeGreaterThan(160);
    expect(child.own.mb).toBeLessThan(child.maxRss - 80);
  });
});
