/**
 * Start-up timing marks for docs/bench-startup.md: with LABS_STARTUP_MARKS=1 in the environment,
 * `mark(name)` records `performance.now()` (wall ms since the process started) and
 * the process's CPU time so far (user + system, all threads, ms), and the marks are printed
 * to stderr, one `mark NAME WALL CPU` line each, when the process exits. Otherwise `mark` does nothing.
 */
const marks: [string, number, number][] | null = process.env.LABS_STARTUP_MARKS ? [] : null;

if (marks) {
  process.on('exit', () => {
    mark('exit');
    process.stderr.write(
      `${marks.map(([n, t, c]) => `mark ${n} ${t.toFixed(1)} ${c.toFixed(1)}`).join('\n')}\n`,
    );
  });
}

export function mark(name: string): void {
  if (!marks) return;
  const cpu = process.cpuUsage();
  marks.push([name, performance.now(), (cpu.user + cpu.system) / 1000]);
}
