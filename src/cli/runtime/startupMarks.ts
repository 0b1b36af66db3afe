/**
 * Start-up timing marks for docs/bench-startup.md: with LABS_STARTUP_MARKS=1 in the environment,
 * `mark(name)` records `performance.now()` (wall ms since the process started), the process's CPU
 * time so far (user + system, all threads, ms) and its minor page faults so far (Linux; -1
 * elsewhere: a fresh page has cost ~12 us on the project's VMs, see the `memory` bench), and the
 * marks are printed to stderr, one `mark NAME WALL CPU FAULTS` line each, when the process exits.
 * Otherwise `mark` does nothing.
 */
import { readFileSync } from 'node:fs';

const marks: [string, number, number, number][] | null = process.env.LABS_STARTUP_MARKS ? [] : null;

if (marks) {
  process.on('exit', () => {
    mark('exit');
    process.stderr.write(
      `${marks.map(([n, t, c, f]) => `mark ${n} ${t.toFixed(1)} ${c.toFixed(1)} ${f}`).join('\n')}\n`,
    );
  });
}

/** Minor page faults of this process so far (field 10 of /proc/self/stat), or -1 off Linux. */
function minorFaults(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // fields after the ')' closing the command name: state is field 3, minflt field 10
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
  } catch {
    return -1;
  }
}

export function mark(name: string): void {
  if (!marks) return;
  const cpu = process.cpuUsage();
  marks.push([name, performance.now(), (cpu.user + cpu.system) / 1000, minorFaults()]);
}
