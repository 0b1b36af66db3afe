/**
 * `labs report RECORD.json [RECORD.json ...] --html OUT.html [--png DIR]`: one self-contained HTML
 * page with the records' config, metrics and a plot per curve family; several records are overlaid.
 */
import { readRecord } from '../../report/records.js';
import { checkOutputPlaces, type OutputPlace } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';

/** The names `--png` writes (report/html.ts `pngFileName`): `01-family.png`. */
const PNG_FILE = /^\d{2,}-.*\.png$/;

export async function reportCommand(p: Extract<ParsedCli, { command: 'report' }>): Promise<number> {
  const places: OutputPlace[] = [{ flag: '--html', path: p.html, kind: 'file' }];
  if (p.png) places.push({ flag: '--png', path: p.png, kind: 'dir', filePattern: PNG_FILE });
  checkOutputPlaces(
    places,
    p.records.map((path) => ({ flag: 'RECORD', path })),
    { consequence: 'nothing was written' },
  );
  const records = [];
  for (const file of p.records) records.push(await readRecord(file));
  const { writeHtmlReport } = await import('../../report/html.js');
  const result = await writeHtmlReport(records, { html: p.html, png: p.png, sources: p.records });
  const n = result.plotted.length;
  const plotted = n === 0 ? 'no plots' : `${n} plot${n === 1 ? '' : 's'}: ${result.plotted.join(', ')}`;
  const lines = [`report: ${result.html} (${plotted})`];
  for (const o of result.omitted) lines.push(`note: ${o}`);
  for (const png of result.pngs) lines.push(`png: ${png}`);
  output.write(`${lines.join('\n')}\n`);
  return 0;
}
