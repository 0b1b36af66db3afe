/**
 * Draws a PlotSpec as a standalone SVG string with Observable Plot on a linkedom document (no
 * browser, no hand-built paths), and turns an SVG into a PNG with resvg. The legend is drawn by
 * Plot too (a swatch and a label per series under the x axis), so the SVG is complete on its own:
 * the same string goes into the HTML page and into the PNG.
 *
 * Plot, linkedom and resvg are imported lazily so `labs --help` stays fast.
 *
 * Marks, for tests and readers: each series' line is one `path` in `g[aria-label=line]` with the
 * series name as its `<title>`; a stacked area is one `path` per series in `g[aria-label=area]`;
 * bars are `rect`s in `g[aria-label=bar]`. Bands and legend marks carry `aria-description`
 * ('95% band', 'legend') so they are not mistaken for data.
 */
import type * as PlotModule from '@observablehq/plot';
import type { PlotPoint, PlotSpec } from './plotData.js';

export interface RenderOptions {
  /** Outer width in px. */
  width: number;
  /** Height of the plotting frame plus axes, in px (the legend adds rows below). */
  height: number;
}

const DEFAULTS: RenderOptions = { width: 640, height: 300 };

/** Tableau 10: distinct in colour and in lightness; series beyond ten repeat colours. */
export const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
];

/** stroke-dasharray per record of an overlay, matching plotData's LINE_STYLE_NAMES. */
export const DASHES = ['none', '7,4', '2,3', '8,3,2,3'];

/**
 * Colour of each series. Alone: the palette in legend order. In an overlaid line plot: one colour
 * per series name within a record (`mixed` of every record shares one), the records told apart by
 * their dash, so comparison reads "same colour, other line style".
 */
export function seriesColors(spec: Pick<PlotSpec, 'series' | 'overlay' | 'kind'>): string[] {
  if (!spec.overlay || spec.kind !== 'line') {
    return spec.series.map((_, i) => PALETTE[i % PALETTE.length] as string);
  }
  const bases: string[] = [];
  return spec.overlay.base.map((b) => {
    if (!bases.includes(b)) bases.push(b);
    return PALETTE[bases.indexOf(b) % PALETTE.length] as string;
  });
}

const LEGEND_ROW = 16;
const LEGEND_CHAR = 6.4;
const LEGEND_SWATCH = 16;
const LEGEND_GAP = 18;
const MARGIN_LEFT = 56;
const MARGIN_BOTTOM_AXIS = 40;
/** Distance from the frame's bottom to the x-axis label; the legend starts below it. */
const X_LABEL_OFFSET = 32;

export interface LegendItem {
  name: string;
  color: string;
  /** Offset from the left edge of the plotting frame, px. */
  dx: number;
  row: number;
}

/**
 * Lays legend items left to right, wrapping to a new row when the next one would pass `width`.
 * Item width = swatch + label (estimated at `LEGEND_CHAR` px per character) + gap.
 */
export function legendLayout(
  series: readonly string[],
  width: number,
  colors: readonly string[] = series.map((_, i) => PALETTE[i % PALETTE.length] as string),
): { items: LegendItem[]; rows: number } {
  const items: LegendItem[] = [];
  let dx = 0;
  let row = 0;
  series.forEach((name, i) => {
    const w = LEGEND_SWATCH + name.length * LEGEND_CHAR + LEGEND_GAP;
    if (dx > 0 && dx + w > width) {
      row += 1;
      dx = 0;
    }
    items.push({ name, color: colors[i] as string, dx, row });
    dx += w;
  });
  return { items, rows: series.length ? row + 1 : 0 };
}

type PlotDocument = NonNullable<PlotModule.PlotOptions['document']>;

interface PlotRuntime {
  Plot: typeof PlotModule;
  document: PlotDocument;
}

/** What we use of the element Plot returns (the project compiles without the DOM lib). */
interface SvgElementLike {
  setAttribute(name: string, value: string): void;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  querySelectorAll(selector: string): Iterable<SvgElementLike>;
  querySelector(selector: string): SvgElementLike | null;
  textContent: string | null;
  outerHTML: string;
}

/**
 * Plot's line mark takes one dash for all its series; give each series' path (found by its
 * `<title>`) the dash of its record, and each legend swatch a line-style hint via its symbol.
 */
function dashByRecord(svg: SvgElementLike, spec: PlotSpec): void {
  const overlay = spec.overlay as NonNullable<PlotSpec['overlay']>;
  const recordOf = new Map(spec.series.map((name, i) => [name, overlay.record[i] as number]));
  for (const g of svg.querySelectorAll('g[aria-label="line"]')) {
    if (g.hasAttribute('aria-description')) continue;
    for (const path of g.querySelectorAll('path')) {
      const r = recordOf.get(path.querySelector('title')?.textContent ?? '') ?? 0;
      const dash = DASHES[r % DASHES.length] as string;
      if (dash !== 'none') path.setAttribute('stroke-dasharray', dash);
    }
  }
  // Legend swatches (one dot mark per item, in series order) become short lines in the same style.
  const swatches = [...svg.querySelectorAll('g[aria-label="dot"][aria-description="legend"]')];
  swatches.forEach((g, i) => {
    const color = g.getAttribute('fill') ?? '#000';
    const dash = DASHES[(overlay.record[i] ?? 0) % DASHES.length] as string;
    g.setAttribute('fill', 'none');
    g.setAttribute('stroke', color);
    g.setAttribute('stroke-width', '2');
    if (dash !== 'none') g.setAttribute('stroke-dasharray', dash);
    for (const path of g.querySelectorAll('path')) path.setAttribute('d', 'M-6,0h11');
  });
}

let runtime: Promise<PlotRuntime> | null = null;

function loadRuntime(): Promise<PlotRuntime> {
  runtime ??= (async () => {
    const [Plot, { parseHTML }] = await Promise.all([import('@observablehq/plot'), import('linkedom')]);
    const { document } = parseHTML('<!DOCTYPE html><html><head></head><body></body></html>');
    return { Plot, document: document as unknown as PlotDocument };
  })();
  return runtime;
}

function dataMarks(Plot: typeof PlotModule, spec: PlotSpec): PlotModule.Markish[] {
  const finite = spec.points.filter((p) => Number.isFinite(p.y));
  const banded = spec.points.filter((p) => Number.isFinite(p.lo) && Number.isFinite(p.hi));
  const marks: PlotModule.Markish[] = [];
  if (spec.kind === 'stacked-area') {
    marks.push(
      Plot.areaY(finite, { x: 'x', y: 'y', z: 'series', fill: 'series', title: 'series', fillOpacity: 0.85 }),
      Plot.ruleY([0]),
    );
    return marks;
  }
  if (spec.kind === 'bar') {
    const grouped = spec.series.length > 1;
    const position = grouped ? { fx: 'x', x: 'series' } : { x: 'x' };
    marks.push(Plot.barY(finite, { ...position, y: 'y', fill: 'series', title: 'series' }), Plot.ruleY([0]));
    if (banded.length) {
      marks.push(Plot.ruleX(banded, { ...position, y1: 'lo', y2: 'hi', ariaDescription: '95% band' }));
    }
    return marks;
  }
  if (banded.length) {
    marks.push(
      Plot.areaY(banded, {
        x: 'x',
        y1: 'lo',
        y2: 'hi',
        z: 'series',
        fill: 'series',
        fillOpacity: 0.18,
        ariaDescription: '95% band',
      }),
    );
  }
  // y undefined (not NaN) makes Plot break the line there instead of dropping the point silently.
  const gapped = spec.points.map((p: PlotPoint) => (Number.isFinite(p.y) ? p : { ...p, y: undefined }));
  marks.push(
    Plot.lineY(gapped, { x: 'x', y: 'y', z: 'series', stroke: 'series', title: 'series', strokeWidth: 1.8 }),
  );
  const xCount = new Set(spec.points.map((p) => p.x)).size;
  if (xCount <= 25) marks.push(Plot.dot(finite, { x: 'x', y: 'y', fill: 'series', r: 2.5 }));
  return marks;
}

function legendMarks(Plot: typeof PlotModule, items: LegendItem[]): PlotModule.Markish[] {
  return items.flatMap((item) => {
    const dy = MARGIN_BOTTOM_AXIS + 6 + item.row * LEGEND_ROW;
    return [
      Plot.dot([item.name], {
        frameAnchor: 'bottom-left',
        dx: item.dx + 5,
        dy,
        r: 5,
        symbol: 'square',
        fill: item.color,
        facet: 'super',
        ariaDescription: 'legend',
      }),
      Plot.text([item.name], {
        frameAnchor: 'bottom-left',
        dx: item.dx + 14,
        dy,
        text: (d: string) => d,
        textAnchor: 'start',
        fontSize: 11,
        facet: 'super',
        ariaDescription: 'legend',
      }),
    ];
  });
}

/**
 * The order of categorical x values: ascending when every value is a number (lags), else the order
 * of first appearance (the table's row order: '0', '1', '2-3', '4-7', '16+'), never a string sort.
 */
export function categoryOrder(xs: readonly (number | string)[]): (number | string)[] {
  const unique = [...new Set(xs)];
  return unique.every((x) => typeof x === 'number') ? (unique as number[]).sort((a, b) => a - b) : unique;
}

/** Renders one plot as a standalone SVG document string (with xmlns), width x (height + legend rows). */
export async function renderPlotSvg(spec: PlotSpec, options: Partial<RenderOptions> = {}): Promise<string> {
  const o = { ...DEFAULTS, ...options };
  const { Plot, document } = await loadRuntime();
  const colors = seriesColors(spec);
  const legend = legendLayout(spec.series, o.width - MARGIN_LEFT - 20, colors);
  const marginBottom = MARGIN_BOTTOM_AXIS + legend.rows * LEGEND_ROW + 12;
  const categoricalX = spec.kind === 'bar' || spec.points.some((p) => typeof p.x === 'string');
  const xValues = categoryOrder(spec.points.map((p) => p.x));
  // A band x axis labels every value; keep about 12 labels.
  const step = Math.max(1, Math.ceil(xValues.length / 12));
  // Integer x values (steps, updates) get integer ticks: Plot's own ticks would put 1.5 between steps 1 and 2.
  const integerX = !categoricalX && xValues.length > 0 && xValues.every((x) => Number.isInteger(x));
  const xTicks =
    categoricalX || (integerX && xValues.length <= 12) ? xValues.filter((_, i) => i % step === 0) : undefined;
  const grouped = spec.kind === 'bar' && spec.series.length > 1;
  const svg = Plot.plot({
    document,
    width: o.width,
    height: o.height + legend.rows * LEGEND_ROW,
    marginLeft: MARGIN_LEFT,
    marginRight: 20,
    marginBottom,
    style: { background: 'white', color: '#222' },
    color: { domain: spec.series, range: colors },
    // Plot sorts a band domain; pin it so categories keep the table's order ('16+' after '8-15')
    // and the bars of a group keep the legend's order.
    x: grouped
      ? { axis: null, domain: spec.series }
      : {
          label: spec.xLabel,
          labelOffset: X_LABEL_OFFSET,
          ...(xTicks ? { ticks: xTicks } : {}),
          ...(categoricalX ? { domain: xValues } : {}),
        },
    ...(grouped
      ? {
          fx: {
            label: spec.xLabel,
            labelOffset: X_LABEL_OFFSET,
            domain: xValues,
            ...(xTicks ? { ticks: xTicks } : {}),
          },
        }
      : {}),
    y: { label: spec.yLabel, grid: true },
    marks: [...dataMarks(Plot, spec), ...legendMarks(Plot, legend.items)],
  }) as unknown as SvgElementLike;
  if (spec.overlay && spec.kind === 'line') dashByRecord(svg, spec);
  svg.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', spec.title);
  return svg.outerHTML;
}

/** Rasterises an SVG string to PNG bytes with resvg (system fonts, white background). */
export async function svgToPng(svg: string): Promise<Uint8Array> {
  const { Resvg } = await import('@resvg/resvg-js');
  const resvg = new Resvg(svg, {
    background: 'white',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}
