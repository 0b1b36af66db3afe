/**
 * `labs audit PATH [--preset verl|trl|generic] [--json] [--out DIR] [--skip-bad-rows] [--reward COL]
 *  [--col-<name> SOURCE]... [--pass-value X] [--fail-value X] [--memory-limit SIZE]`: diagnostics of a real run's dumps.
 * The audit module (and with it DuckDB) is imported only here, when the command runs.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { AuditPresetName } from '../../audit/presets.js';
import { isTokenPreset } from '../../audit/tokens/presetNames.js';
import { LabError } from '../../core/errors.js';
import { toJson, writeRecord } from '../../report/records.js';
import type { ParsedCli } from '../parse.js';
import { createProgress } from '../progress.js';
import { output } from '../stdout.js';
import { runTokenAuditCli, writeAuditHtml } from './tokenAudit.js';

/**
 * Refuses an `--out` directory that could not be created or written, before the audit runs (an
 * audit of a large dump takes a while, and its result would be lost). Creates nothing: the nearest
 * existing ancestor must be a writable directory, and `dir` itself, if it exists, a directory.
 */
export async function assertWritableOut(dir: string): Promise<void> {
  const refuse = (why: string, cause?: unknown) =>
    new LabError('BAD_CLI', `--out ${dir}: ${why}; nothing was run`, {
      cause,
      details: { field: '--out', file: dir },
    });
  let path = resolve(dir);
  for (;;) {
    let info: Awaited<ReturnType<typeof stat>> | null = null;
    try {
      info = await stat(path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') throw refuse(`a parent of ${path} is a file, not a directory`, e);
      if (code !== 'ENOENT') throw refuse(`cannot inspect ${path} (${code ?? String(e)})`, e);
    }
    if (info) {
      if (!info.isDirectory()) throw refuse(`${path} exists and is not a directory`);
      try {
        await access(path, constants.W_OK | constants.X_OK);
      } catch (e) {
        throw refuse(`${path} is not writable`, e);
      }
      return;
    }
    const parent = dirname(path);
    if (parent === path) throw refuse('no existing parent directory');
    path = parent;
  }
}

export async function auditCommand(p: Extract<ParsedCli, { command: 'audit' }>): Promise<number> {
  if (p.out) await assertWritableOut(p.out);
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
  if (p.tokenExtra.html) await writeAuditHtml(record, p.tokenExtra.html, p);
  if (p.json) {
    output.write(`${toJson(record)}\n`);
  } else {
    const { formatAudit } = await import('../../report/summaries/audit.js');
    output.write(`${formatAudit(record)}\n`);
    if (path) output.write(`\nrecord: ${path}\n`);
  }
  if (record.metrics.bad_rows_skipped) {
    process.stderr.write(`labs: warning: skipped ${record.metrics.bad_rows_skipped} bad row(s)\n`);
  }
  return 0;
}
