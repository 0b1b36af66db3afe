/**
 * `labs audit PATH [--preset verl|trl|generic] [--json] [--out DIR] [--skip-bad-rows] [--reward COL]
 *  [--col-<name> SOURCE]... [--pass-value X] [--fail-value X] [--memory-limit SIZE]`: diagnostics of a real run's dumps.
 * The audit module (and with it DuckDB) is imported only here, when the command runs.
 */
import type { AuditPresetName } from '../../audit/presets.js';
import { isTokenPreset } from '../../audit/tokens/presetNames.js';
import { toJson, writeRecord } from '../../report/records.js';
import { noteWritten } from '../interrupt.js';
import { lockOutputDir } from '../outputLock.js';
import { checkOutputPlaces, type OutputPlace } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { createProgress } from '../progress.js';
import { output } from '../stdout.js';
import { runTokenAuditCli, writeAuditHtml } from './tokenAudit.js';

export async function auditCommand(p: Extract<ParsedCli, { command: 'audit' }>): Promise<number> {
  const places: OutputPlace[] = [];
  if (p.out) places.push({ flag: '--out', path: p.out, kind: 'dir', files: ['record.json'] });
  if (p.tokenExtra.html) places.push({ flag: '--html', path: p.tokenExtra.html, kind: 'file' });
  checkOutputPlaces(places, [{ flag: 'PATH', path: p.path }]);
  const lock = p.out ? lockOutputDir(p.out, { flag: '--out', force: p.force }) : null;
  try {
    // --watch follows the directory until Ctrl-C, then the one-shot audit below writes the record.
    if (p.auditExtra.watch) await (await import('./auditWatch.js')).watchAudit(p);
    const { runAudit } = await import('../../audit/audit.js');
    const progress = createProgress('audit', !p.json);
    let record: Awaited<ReturnType<typeof runAudit>>;
    try {
      record = isTokenPreset(p.preset)
        ? await runTokenAuditCli(p, (done, total) => progress.update(done, total))
        : await runAudit(p.path, {
            preset: p.preset as AuditPresetName,
            columns: p.columns,
            reward: p.reward,
            skipBadRows: p.skipBadRows,
            failValue: p.failValue,
            passValue: p.passValue,
            ...p.auditExtra,
            ...(p.memoryLimit === null ? {} : { memoryLimit: p.memoryLimit }),
            onProgress: (done, total) => progress.update(done, total),
          });
    } finally {
      progress.stop();
    }
    const path = p.out ? await writeRecord(record, { dir: p.out }) : null;
    if (path) noteWritten(path);
    if (p.tokenExtra.html) {
      await writeAuditHtml(record, p.tokenExtra.html, p);
      noteWritten(p.tokenExtra.html);
    }
    if (p.json) {
      output.write(`${toJson(record)}\n`);
    } else {
      const { formatAudit } = await import('../../report/summaries/audit.js');
      output.write(`${formatAudit(record)}\n`);
      const { formatLogComparison } = await import('../../report/summaries/logComparison.js');
      const extra = formatLogComparison(record);
      if (extra !== '') output.write(`${extra}\n`);
      if (path) output.write(`\nrecord: ${path}\n`);
    }
    if (record.metrics.bad_rows_skipped) {
      process.stderr.write(`labs: warning: skipped ${record.metrics.bad_rows_skipped} bad row(s)\n`);
    }
    return 0;
  } finally {
    lock?.release();
  }
}
