/**
 * A self-contained HTML page of plots and tables (same look and guarantees as the report page: inline
 * CSS and SVG, no scripts, no URLs), for outputs that are not one record: sweeps and `labs compare`.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LabError } from '../core/errors.js';
import { CSS, escapeHtml, type PagePlot } from './page.js';
import type { PlotSpec } from './plotData.js';
import { renderPlotSvg } from './plots.js';
import { writeFileAtomic } from './records.js';

export interface SimplePageInput {
  title: string;
  /** Lines under the title (plain text). */
  meta: string[];
  plots: PagePlot[];
  /** Sections after the plots: a heading and ready HTML (tables built with `htmlTable`). */
  sections: { heading: string; html: string }[];
  version: string;
}

/** The page as a string: a pure function of its input (the same input gives the same bytes). */
export function renderSimplePage(input: SimplePageInput): string {
  const figures = input.plots.map(({ spec, svg }) =>
    [
      `<figure class="plot" data-family="${escapeHtml(spec.family)}" data-kind="${spec.kind}">`,
      `<h3>${escapeHtml(spec.title)}</h3>`,
      svg,
      spec.notes.length
        ? `<figcaption>${spec.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('')}</figcaption>`
        : '',
      '</figure>',
    ].join('\n'),
  );
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(input.title)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>${escapeHtml(input.title)}</h1>
<ul class="meta">${input.meta.map((m) => `<li>${escapeHtml(m)}</li>`).join('\n')}</ul>
<h2>Plots</h2>
<div class="plots">
${figures.join('\n')}
</div>
${input.sections.map((s) => `<h2>${escapeHtml(s.heading)}</h2>\n${s.html}`).join('\n')}
<p class="meta">reasoning-rl-labs ${escapeHtml(input.version)} · self-contained report: no scripts, no network.</p>
</body>
</html>
`;
}

/**
 * Draws `specs`, renders the page and writes it atomically to `path`; returns the drawn plots (for
 * PNGs). Errors: IO_ERROR naming the file.
 */
export async function writeSimplePage(
  path: string,
  specs: readonly PlotSpec[],
  page: Omit<SimplePageInput, 'plots'>,
): Promise<PagePlot[]> {
  const plots: PagePlot[] = [];
  for (const spec of specs) plots.push({ spec, svg: await renderPlotSvg(spec) });
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, renderSimplePage({ ...page, plots }));
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot write ${path}: ${(e as Error).message}`, {
      cause: e,
      details: { file: path },
    });
  }
  return plots;
}
