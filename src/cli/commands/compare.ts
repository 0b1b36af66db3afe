/**
 * `labs compare A.json B.json [--metric KEY]... [--metric-a KA --metric-b KB]... [--json] [--html FILE]`:
 * paired differences B − A of two multi-seed records run on the same seeds, of the same metric keys
 * or of a named key of each (across experiments) (experiments/compareRecords.ts).
 */
import { LabError } from '../../core/errors.js';
import { compareRecords } from '../../experiments/compareRecords.js';
import { experimentNames, loadExperiment } from '../../experiments/registry.js';
import type { ComparisonPlan, MultiSeedRecord } from '../../experiments/types.js';
import { formatCompare, writeCompareHtml } from '../../report/compareOutput.js';
import { isAuditRecord } from '../../report/page.js';
import { recordLabels } from '../../report/plotData.js';
import { isSweepData, normalizeRecord, normalizeSweepRecord } from '../../report/recordShape.js';
import { readRecord, toJson } from '../../report/records.js';
import { checkOutputPlaces } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';

async function readMulti(path: string): Promise<MultiSeedRecord> {
  const data = await readRecord(path);
  if (isSweepData(data)) {
    const sweep = normalizeSweepRecord(data, path);
    throw new LabError(
      'BAD_CLI',
      `compare: ${path} is a sweep record (${sweep.experiment}, ${sweep.sweep.key} = ${sweep.sweep.values.map((v) => JSON.stringify(v)).join(', ')}); labs compare pairs two --seeds records. A sweep's values are compared within it (the dose-response table: each arm's paired difference at each value; labs report ${path} --html OUT.html draws them); to compare two of its values, run each as --seeds records (--set ${sweep.sweep.key}=...) and compare those`,
      { details: { file: path } },
    );
  }
  const rec = normalizeRecord(data, path);
  if (isAuditRecord(rec)) {
    throw new LabError(
      'BAD_CLI',
      `compare: ${path} is an audit record (labs audit of ${String(rec.config.path)}), not a --seeds record; paired differences need two --seeds records of one experiment. To put audits side by side: labs report ${path} OTHER.json --html OUT.html`,
      { details: { file: path } },
    );
  }
  if (!('runs' in rec)) {
    throw new LabError(
      'BAD_CLI',
      `compare: ${path} is a single-seed record (seed ${rec.seed}); paired differences need two --seeds records`,
      { details: { file: path } },
    );
  }
  return rec;
}

export async function compareCommand(p: Extract<ParsedCli, { command: 'compare' }>): Promise<number> {
  if (p.html) {
    checkOutputPlaces(
      [{ flag: '--html', path: p.html, kind: 'file' }],
      [
        { flag: 'A', path: p.a },
        { flag: 'B', path: p.b },
      ],
      { consequence: 'nothing was written' },
    );
  }
  const a = await readMulti(p.a);
  const b = await readMulti(p.b);
  const [la, lb] = recordLabels([a, b]);
  const labels = !la || !lb || la.startsWith('#') || la === lb ? ['A', 'B'] : [la, lb];
  let plan: ComparisonPlan | null = null;
  if (a.experiment === b.experiment && experimentNames().includes(a.experiment)) {
    plan = (await loadExperiment(a.experiment)).comparisons?.(a.config) ?? null;
  }
  const result = compareRecords(
    { record: a, source: p.a, label: labels[0] as string },
    { record: b, source: p.b, label: labels[1] as string },
    p.metrics,
    plan,
    p.pairs,
  );
  if (p.html) await writeCompareHtml(result, plan, p.html);
  if (p.json) output.write(`${toJson(result)}\n`);
  else {
    output.write(`${formatCompare(result)}\n`);
    if (p.html) output.write(`report: ${p.html}\n`);
  }
  return 0;
}
