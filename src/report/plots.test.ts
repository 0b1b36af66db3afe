import fc from 'fast-check';
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import type { PlotSpec } from './plotData.js';
import {
  categoryOrder,
  DASHES,
  degenerateYDomain,
  legendLayout,
  PALETTE,
  renderPlotSvg,
  svgToPng,
} from './plots.js';

function spec(over: Partial<PlotSpec>): PlotSpec {
  return {
    family: 'f',
    title: 'T',
    xLabel: 'update',
    yLabel: 'fraction of groups',
    kind: 'line',
    series: ['a', 'b'],
    points: [0, 1, 2].flatMap((x) => [
      { x, y: 0.25 * x, series: 'a' },
      { x, y: 1 - 0.25 * x, series: 'b' },
    ]),
    band: false,
    notes: [],
    ...over,
  };
}

/** Parses an SVG string and returns the data groups (aria-label) without aria-description. */
function parse(svg: string) {
  const { document } = parseHTML(`<!DOCTYPE html><html><body>${svg}</body></html>`);
  const root = document.querySelector('svg');
  const group = (label: string, description?: string) =>
    [...document.querySelectorAll(`g[aria-label="${label}"]`)].find((g) =>
      description === undefined
        ? !g.hasAttribute('aria-description')
        : g.getAttribute('aria-description') === description,
    );
  return { document, root, group };
}

describe('renderPlotSvg', () => {
  it('draws one titled line path per series, axis labels and a Plot-made legend', async () => {
    const svg = await renderPlotSvg(spec({}));
    const { root, group, document } = parse(svg);
    expect(root?.getAttribute('xmlns')).toBe('http://www.w3.org/2000/svg');
    expect(root?.getAttribute('width')).toBe('640');
    const paths = [...(group('line')?.querySelectorAll('path') ?? [])];
    expect(paths.map((p) => p.querySelector('title')?.textContent)).toEqual(['a', 'b']);
    // Colours follow the palette in legend order.
    expect(paths.map((p) => p.getAttribute('stroke'))).toEqual([PALETTE[0], PALETTE[1]]);
    const legend = [...document.querySelectorAll('g[aria-label="text"][aria-description="legend"] text')];
    expect(legend.map((t) => t.textContent)).toEqual(['a', 'b']);
    expect(document.querySelector('g[aria-label="y-axis label"]')?.textContent).toContain(
      'fraction of groups',
    );
    expect(document.querySelector('g[aria-label="x-axis label"]')?.textContent).toContain('update');
  });

  it('stacks a stacked area: the last series tops out at the sum (1 here)', async () => {
    const svg = await renderPlotSvg(spec({ kind: 'stacked-area' }));
    const { group } = parse(svg);
    const areas = [...(group('area')?.querySelectorAll('path') ?? [])];
    expect(areas.map((p) => p.querySelector('title')?.textContent)).toEqual(['a', 'b']);
    // With a + b = 1 at every x the stack's top is flat: every upper vertex of b shares one y.
    const d = areas[1]?.getAttribute('d') ?? '';
    const ys = [...d.matchAll(/[ML][\d.]+,([\d.]+)/g)].map((m) => Number(m[1]));
    const top = Math.min(...ys);
    expect(ys.filter((y) => Math.abs(y - top) < 1e-6).length).toBe(3);
  });

  it('draws a band area per series when points carry lo/hi', async () => {
    const points = [0, 1].flatMap((x) => [
      { x, y: 0.5, lo: 0.4, hi: 0.6, series: 'a' },
      { x, y: 0.2, lo: 0.1, hi: 0.3, series: 'b' },
    ]);
    const { group } = parse(await renderPlotSvg(spec({ points, band: true })));
    expect(group('area', '95% band')?.querySelectorAll('path').length).toBe(2);
    expect(group('line')?.querySelectorAll('path').length).toBe(2);
  });

  it('labels a constant series with readable ticks from 0 to its value (tick labels read back from the SVG)', async () => {
    const ticks = (svg: string, axis: 'x' | 'y') =>
      [...parse(svg).document.querySelectorAll(`g[aria-label="${axis}-axis tick label"] text`)].map((t) =>
        (t.textContent ?? '').replace('\u2212', '-'),
      );
    // Before: one tick '400.000000', which the 56 px margin clipped to read '0.000000'.
    const flat = spec({
      series: ['n'],
      points: [1, 2, 3].map((x) => ({ x, y: 400, lo: 400, hi: 400, series: 'n' })),
      band: true,
    });
    const labels = ticks(await renderPlotSvg(flat), 'y');
    expect(labels).toContain('0');
    expect(labels).toContain('400');
    for (const l of labels) expect(l).toMatch(/^-?\d{1,3}(\.\d{1,2})?$/);
    // A constant 0 gets an axis around 0, labelled with one decimal at most.
    const zero = ticks(
      await renderPlotSvg(spec({ series: ['z'], points: [1, 2].map((x) => ({ x, y: 0, series: 'z' })) })),
      'y',
    );
    expect(zero).toContain('0.0');
    for (const l of zero) expect(l).toMatch(/^-?\d\.\d$/);
    // Integer x (updates, steps) gets integer ticks only, not 1.5 / 2.5.
    expect(ticks(await renderPlotSvg(flat), 'x')).toEqual(['1', '2', '3']);
    const long = spec({
      series: ['a'],
      points: Array.from({ length: 150 }, (_, i) => ({ x: i + 1, y: i, series: 'a' })),
    });
    const xs = ticks(await renderPlotSvg(long), 'x');
    expect(xs.length).toBeGreaterThan(3);
    for (const l of xs) expect(Number.isInteger(Number(l))).toBe(true);
  });

  it("keeps Plot's own y domain for a stacked area of constant series (they stack to their sum)", () => {
    const flat = spec({
      kind: 'stacked-area',
      points: [0, 1, 2].flatMap((x) => [
        { x, y: 0.5, series: 'a' },
        { x, y: 0.5, series: 'b' },
      ]),
    });
    expect(degenerateYDomain(flat)).toBeUndefined();
    expect(degenerateYDomain({ ...flat, points: flat.points.map((p) => ({ ...p, y: 0 })) })).toEqual([-1, 1]);
    expect(degenerateYDomain({ kind: 'line', points: [{ x: 1, y: 384, series: 'a' }] })).toEqual([0, 384]);
    expect(degenerateYDomain({ kind: 'line', points: [{ x: 1, y: -2, series: 'a' }] })).toEqual([-2, 0]);
  });

  it('draws a difference of exactly 0 with CI [0, 0] as a bar of height 0 on an axis around 0', async () => {
    const svg = await renderPlotSvg(
      spec({
        kind: 'bar',
        xLabel: 'arm',
        series: ['d'],
        points: [{ x: 'B', y: 0, lo: 0, hi: 0, series: 'd' }],
        band: true,
      }),
    );
    const { group, document } = parse(svg);
    const rects = [...(group('bar')?.querySelectorAll('rect') ?? [])];
    expect(rects.map((r) => Number(r.getAttribute('height')))).toEqual([0]);
    const labels = [...document.querySelectorAll('g[aria-label="y-axis tick label"] text')].map(
      (t) => t.textContent,
    );
    expect(labels).toContain('0.0');
    expect(labels.length).toBeGreaterThan(2);
  });

  it('draws bars: one rect per (x, series)', async () => {
    const points = ['p50', 'p99', 'max'].flatMap((x, i) => [
      { x, y: i + 1, series: 'a' },
      { x, y: i + 2, series: 'b' },
    ]);
    const { group } = parse(await renderPlotSvg(spec({ kind: 'bar', points })));
    expect(group('bar')?.querySelectorAll('rect').length).toBe(6);
  });

  it('keeps grouped-bar categories in table order and bars in legend order (no string sort)', async () => {
    // '16+' sorts before '2' as a string; the table order is 0, 1, 2, 16+.
    const order = ['0', '1', '2', '16+'];
    const points = order.flatMap((x, i) => [
      { x, y: i + 1, series: 'zeta' },
      { x, y: 10, series: 'alpha' },
    ]);
    const svg = await renderPlotSvg(spec({ kind: 'bar', series: ['zeta', 'alpha'], points }));
    const { document, group } = parse(svg);
    const labels = [...document.querySelectorAll('g[aria-label="fx-axis tick label"] text')];
    expect(labels.map((t) => t.textContent)).toEqual(order);
    const shift = (g: { getAttribute(name: string): string | null }) =>
      Number(/translate\(([\d.]+)/.exec(g.getAttribute('transform') ?? '')?.[1]);
    const facets = [...(group('bar')?.children ?? [])].sort((a, b) => shift(a) - shift(b));
    expect(facets.length).toBe(4);
    // Left to right, zeta's bar (first legend colour) grows 1, 2, 3, 4 and sits left of alpha's.
    const heights = facets.map((f) => {
      const [first, second] = [...f.querySelectorAll('rect')].sort(
        (a, b) => Number(a.getAttribute('x')) - Number(b.getAttribute('x')),
      );
      expect(first?.getAttribute('fill')).toBe(PALETTE[0]);
      expect(second?.getAttribute('fill')).toBe(PALETTE[1]);
      return Number(first?.getAttribute('height'));
    });
    for (let i = 1; i < heights.length; i++) expect(heights[i]).toBeGreaterThan(heights[i - 1] as number);
  });
});

describe('overlaid line plots', () => {
  it('give the same series of two records one colour and dash the second record, lines and legend', async () => {
    const series = ['seed 1 · a', 'seed 1 · b', 'seed 2 · a', 'seed 2 · b'];
    const points = series.flatMap((s, k) => [0, 1, 2].map((x) => ({ x, y: k + x / 10, series: s })));
    const svg = await renderPlotSvg(
      spec({
        series,
        points,
        overlay: { record: [0, 0, 1, 1], base: ['a', 'b', 'a', 'b'], labels: ['seed 1', 'seed 2'] },
      }),
    );
    const { group, document } = parse(svg);
    const paths = [...(group('line')?.querySelectorAll('path') ?? [])];
    const style = Object.fromEntries(
      paths.map((p) => [
        p.querySelector('title')?.textContent,
        [p.getAttribute('stroke'), p.getAttribute('stroke-dasharray')],
      ]),
    );
    expect(style).toEqual({
      'seed 1 · a': [PALETTE[0], null],
      'seed 1 · b': [PALETTE[1], null],
      'seed 2 · a': [PALETTE[0], DASHES[1]],
      'seed 2 · b': [PALETTE[1], DASHES[1]],
    });
    const swatches = [...document.querySelectorAll('g[aria-label="dot"][aria-description="legend"]')];
    expect(swatches.map((g) => [g.getAttribute('stroke'), g.getAttribute('stroke-dasharray')])).toEqual([
      [PALETTE[0], null],
      [PALETTE[1], null],
      [PALETTE[0], DASHES[1]],
      [PALETTE[1], DASHES[1]],
    ]);
  });
});

describe('categoryOrder', () => {
  it('sorts numbers ascending and keeps strings in first-appearance order', () => {
    expect(categoryOrder([3, 0, 12, 3, 1])).toEqual([0, 1, 3, 12]);
    expect(categoryOrder(['0', '1', '2', '4-7', '16+', '2'])).toEqual(['0', '1', '2', '4-7', '16+']);
  });
});

describe('legendLayout', () => {
  it('wraps to a new row when the next item would pass the width', () => {
    // item width = 16 + 6.4 * chars + 18: 'aaaa' -> 59.6 px.
    const { items, rows } = legendLayout(['aaaa', 'aaaa', 'aaaa'], 130);
    expect(items.map((i) => [i.row, i.dx])).toEqual([
      [0, 0],
      [0, 59.6],
      [1, 0],
    ]);
    expect(rows).toBe(2);
  });

  it('keeps every item that fits inside the width, in order (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 12 }),
        fc.integer({ min: 200, max: 900 }),
        (names, width) => {
          const { items, rows } = legendLayout(names, width);
          expect(items.map((i) => i.name)).toEqual(names);
          expect(rows).toBe(names.length ? Math.max(...items.map((i) => i.row)) + 1 : 0);
          for (const item of items) {
            const w = 16 + item.name.length * 6.4 + 18;
            if (item.dx > 0) expect(item.dx + w).toBeLessThanOrEqual(width + 1e-9);
          }
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('svgToPng', () => {
  it('writes a PNG of the SVG size', async () => {
    const png = await svgToPng(await renderPlotSvg(spec({})));
    expect([...png.slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const view = new DataView(png.buffer, png.byteOffset);
    // IHDR: width at byte 16, height at 20 (big-endian); 640 x (300 + one legend row of 16).
    expect(view.getUint32(16)).toBe(640);
    expect(view.getUint32(20)).toBe(316);
  });
});
