/**
 * A progress bar on stderr, shown only on a TTY (never in pipes, CI logs or `--json` output), and
 * redrawn at most ten times a second so it costs nothing measurable.
 */
import { isTerminal } from './terminal.js';

export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

export function createProgress(label: string, enabled: boolean): Progress {
  if (!enabled || !isTerminal(2)) return { update() {}, stop() {} };
  const stream = process.stderr;
  let last = 0;
  let drawn = false;
  const start = Date.now();
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      const width = 30;
      const frac = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(frac * width);
      const elapsed = (now - start) / 1000;
      const eta = frac > 0 ? elapsed / frac - elapsed : 0;
      stream.write(
        `\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(frac * 100).toFixed(0).padStart(3)}% ${elapsed.toFixed(1)}s eta ${eta.toFixed(1)}s `,
      );
      drawn = true;
    },
    stop() {
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}
