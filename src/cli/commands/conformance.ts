import { readFile } from 'node:fs/promises';
import { allAdapters } from '../../core/conformance/adapters.js';
import { parseGoldenFile, runConformance } from '../../core/conformance/runner.js';
import { LabError } from '../../core/errors.js';
import { table } from '../../experiments/text.js';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';

type Status = 'matched' | 'mismatched' | 'deviation' | 'unsupported';

/**
 * What was compared: the verl commit the golden file was generated from and, per verl function, how
 * many of its cases matched, mismatched, deviated (declared difference) or had no adapter.
 */
export function coverageLines(
  cases: readonly { fn: string; status: Status }[],
  meta: Record<string, unknown>,
): string[] {
  const byFn = new Map<string, Record<Status, number>>();
  for (const c of cases) {
    const row = byFn.get(c.fn) ?? { matched: 0, mismatched: 0, deviation: 0, unsupported: 0 };
    row[c.status] += 1;
    byFn.set(c.fn, row);
  }
  const commit = typeof meta.verl_commit === 'string' ? meta.verl_commit : 'unknown';
  return [
    `golden outputs of verl at commit ${commit}, per function:`,
    table(
      ['verl function', 'cases', 'matched', 'mismatched', 'deviation', 'unsupported'],
      [...byFn].map(([fn, r]) => [
        fn,
        r.matched + r.mismatched + r.deviation + r.unsupported,
        r.matched,
        r.mismatched,
        r.deviation,
        r.unsupported,
      ]),
    ),
  ];
}

export async function conformanceCommand(p: Extract<ParsedCli, { command: 'conformance' }>): Promise<number> {
  let text: string;
  try {
    text = await readFile(p.file, 'utf8');
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot read ${p.file}: ${(e as Error).message}`, {
      cause: e,
      details: { file: p.file },
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new LabError('PARSE_ERROR', `${p.file}: not valid JSON (${(e as Error).message})`, {
      cause: e,
      details: { file: p.file },
    });
  }
  const golden = parseGoldenFile(data, p.file);
  if (golden.cases.length === 0) {
    throw new LabError('PARSE_ERROR', `${p.file}: the "cases" array is empty, so nothing can be compared`, {
      details: { file: p.file },
    });
  }
  const result = runConformance(golden, allAdapters(), p.file);
  const compared = result.matched + result.mismatched + result.deviations;
  const summary = `${result.matched} matched, ${result.mismatched} mismatched, ${result.deviations} deviations, ${result.unsupported} unsupported`;
  if (p.json) {
    output.write(`${JSON.stringify({ file: p.file, ...result }, null, 2)}\n`);
  } else {
    const lines: string[] = [];
    for (const r of result.cases) {
      if (r.status === 'mismatched') lines.push(`MISMATCH   ${r.name} (${r.fn}): ${r.detail}`);
      else if (r.status === 'deviation') lines.push(`deviation  ${r.name} (${r.fn}): ${r.detail}`);
    }
    const unsupportedFns = [
      ...new Set(result.cases.filter((r) => r.status === 'unsupported').map((r) => r.fn)),
    ];
    if (unsupportedFns.length) lines.push(`unsupported functions: ${unsupportedFns.join(', ')}`);
    lines.push(...coverageLines(result.cases, golden.meta ?? {}), '');
    lines.push(summary);
    if (compared === 0) lines.push('no case was compared: every function in the file is unsupported');
    output.write(`${lines.join('\n')}\n`);
  }
  // A file whose every case is unsupported proves nothing: fail as a mismatch would.
  return result.mismatched > 0 || compared === 0 ? 1 : 0;
}
