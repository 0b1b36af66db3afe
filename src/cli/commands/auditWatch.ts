/**
 * `labs audit DIR --watch`: follows a directory a running job is writing. Every `--watch-interval`
 * seconds (default 1) it finds the dump files that are new or have grown and are complete
 * (src/audit/watch.ts), audits each one alone, and prints one line per step it holds: the cost of
 * a new step does not grow with the steps already read. On Ctrl-C (SIGINT) or SIGTERM it stops
 * and returns; the caller (auditCommand) then runs the one-shot audit of the whole directory and
 * writes its summary and `--out` record, so the last state written equals a one-shot audit.
 *
 * With `--html FILE`, after each poll that read something the live page (src/audit/liveAudit.ts:
 * the step rows added up, labelled live, reloaded by the browser) is written atomically; the final
 * page after Ctrl-C is the one-shot audit's (audit.ts).
 */
import { stat } from 'node:fs/promises';
import { LiveAudit } from '../../audit/liveAudit.js';
import type { AuditPresetName } from '../../audit/presets.js';
import { auditPreset } from '../../audit/presets.js';
import { readyFiles, type WatchState } from '../../audit/watch.js';
import { LabError } from '../../core/errors.js';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';
import { auditRerunLine } from './tokenAudit.js';

type AuditCli = Extract<ParsedCli, { command: 'audit' }>;

function pct(x: unknown): string {
  return typeof x === 'number' ? `${(100 * x).toFixed(1)}%` : '-';
}

/** One terminal line per step of a freshly audited file. */
export function stepLine(row: Record<string, unknown>, file: string, ms: number): string {
  const trunc =
    typeof row.truncated_fraction === 'number' ? `, truncated ${pct(row.truncated_fraction)}` : '';
  return `step ${row.step}: ${row.rows} rows, ${row.groups} groups, zero-variance ${pct(row.zero_variance_fraction)} (all_wrong ${pct(row.all_wrong_fraction)}, all_right ${pct(row.all_right_fraction)}), mean reward ${typeof row.mean_reward === 'number' ? row.mean_reward.toFixed(4) : '-'}, correct ${pct(row.correct_fraction)}${trunc}  [${file}, ${(ms / 1000).toFixed(2)} s]`;
}

/** The live page (timing: seconds since the watch started). */
async function writeLivePage(live: LiveAudit, html: string, p: AuditCli, sinceMs: number): Promise<void> {
  const { writeHtmlReport } = await import('../../report/html.js');
  const record = live.record(p.path, p.preset, performance.now() - sinceMs);
  await writeHtmlReport([record], {
    html,
    png: null,
    sources: [p.path],
    reruns: [auditRerunLine(p)],
    // the browser reloads no faster than the poll, and at most every 2 s
    refreshSeconds: Math.max(2, p.auditExtra.watchInterval),
  });
}

export async function watchAudit(p: AuditCli): Promise<void> {
  const { runAudit } = await import('../../audit/audit.js');
  const preset = auditPreset(p.preset);
  const info = await stat(p.path).catch(() => null);
  if (!info?.isDirectory()) {
    throw new LabError('BAD_CLI', `--watch: ${p.path} is not a directory (watch follows a dump directory)`, {
      details: { field: '--watch', file: p.path },
    });
  }
  const intervalMs = 1000 * p.auditExtra.watchInterval;
  const write = (line: string) => (p.json ? process.stderr : output).write(`${line}\n`);
  const state: WatchState = { read: new Map() };
  const live = new LiveAudit();
  const html = p.tokenExtra.html;
  const watchStarted = performance.now();
  if (html) write(`live page: ${html} (rewritten as steps arrive; the final page after Ctrl-C)`);
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let running = true;
  const onSignal = () => {
    running = false;
    stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  write(`watching ${p.path} (every ${p.auditExtra.watchInterval} s; Ctrl-C writes the final audit)`);
  try {
    while (running) {
      let changed = false;
      for (const { file, size } of await readyFiles(p.path, preset, state)) {
        if (!running) break;
        const started = performance.now();
        try {
          const record = await runAudit(file, {
            // a token-level preset is refused with --watch at parse time (tokenAuditOptions.ts)
            preset: p.preset as AuditPresetName,
            columns: p.columns,
            reward: p.reward,
            skipBadRows: p.skipBadRows,
            failValue: p.failValue,
            passValue: p.passValue,
            ...p.auditExtra,
            lengthAnatomy: false,
            metricsLog: null,
            ...(p.memoryLimit === null ? {} : { memoryLimit: p.memoryLimit }),
          });
          const ms = performance.now() - started;
          for (const row of record.tables.steps ?? []) write(stepLine(row, file, ms));
          live.addFile(file, record.tables.steps ?? []);
          changed = true;
        } catch (e) {
          // A file the job has not finished (a Parquet footer not yet written) or a bad one: say so
          // and retry when it changes; the final one-shot audit reports it with its usual error.
          write(`${file}: not read yet (${e instanceof LabError ? e.message : String(e)})`);
        }
        state.read.set(file, size);
      }
      // At most one page per poll, and only when a file was read: the page is rebuilt from the
      // accumulated step rows (no dump re-read).
      if (html && changed) await writeLivePage(live, html, p, watchStarted);
      await Promise.race([stopped, new Promise((r) => setTimeout(r, intervalMs))]);
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  write('watch stopped: auditing the whole directory');
}
