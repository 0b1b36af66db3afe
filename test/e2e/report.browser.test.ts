// End to end: HTML reports opened in real headless Chromium (the one shipped inside the
// @sparticuz/chromium npm package, see test/support/browser.ts; never a downloaded browser). Every
// plot must render with a data mark per curve, the page must make no request but its own, and
// screenshots land in test-output/report/. When no browser can be launched this FAILS (beforeAll
// throws), it never skips.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSeeds } from '../../src/experiments/multiSeed.js';
import { resolveConfig } from '../../src/experiments/options.js';
import { loadExperiment } from '../../src/experiments/registry.js';
import type { RunRecord } from '../../src/experiments/types.js';
import { writeHtmlReport } from '../../src/report/html.js';
import { launchChromium } from '../support/browser.js';
import { agentLikeMultiSeed, agentLikeRecord } from './syntheticRecords.js';

const OUT = resolve('test-output/report');

interface FigureFacts {
  family: string;
  kind: string;
  title: string;
  svgWidth: number;
  svgHeight: number;
  /** `<title>` of every path in the non-band line group, in order. */
  lineTitles: string[];
  /** Rendered length (px) of each of those paths. */
  lineLengths: number[];
  /** `<title>` of every path in the non-band area group (stacked areas). */
  areaTitles: string[];
  /** Top of the stacked areas' union and the centre of the y tick labelled '1.0' (px, page coords). */
  areaTop: number | null;
  tickOneY: number | null;
  bandPaths: number;
  bandAreaPx: number;
  bars: number;
  legend: string[];
  notes: string[];
}

// page.evaluate callbacks run in the browser; the project compiles without the DOM lib, so this
// describes the little of the DOM they use.
interface DomNode {
  textContent: string | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  querySelector(selector: string): DomNode | null;
  querySelectorAll(selector: string): Iterable<DomNode> & { length: number };
  getBoundingClientRect(): { top: number; width: number; height: number };
  getTotalLength(): number;
}
declare const document: DomNode;

let browser: Browser;
const requests = new Map<string, string[]>();

async function openReport(html: string, screenshot: string) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const seen: string[] = [];
  page.on('request', (r) => seen.push(r.url()));
  const url = pathToFileURL(html).href;
  requests.set(url, seen);
  await page.goto(url, { waitUntil: 'load' });
  const facts = await page.evaluate(() => {
    const num = (s: string | null) => (s === null ? null : Number(s));
    const figures = [...document.querySelectorAll('figure.plot')].map((fig) => {
      const svg = fig.querySelector('svg') as DomNode;
      const box = svg.getBoundingClientRect();
      const dataGroup = (label: string) =>
        [...svg.querySelectorAll(`g[aria-label="${label}"]`)].find(
          (g) => !g.hasAttribute('aria-description'),
        );
      const line = dataGroup('line');
      const linePaths = line ? [...line.querySelectorAll('path')] : [];
      const area = dataGroup('area');
      const areaPaths = area ? [...area.querySelectorAll('path')] : [];
      const band = svg.querySelector('g[aria-label="area"][aria-description="95% band"]');
      const bandPaths = band ? [...band.querySelectorAll('path')] : [];
      const tick = [...svg.querySelectorAll('g[aria-label="y-axis tick label"] text')].find(
        (t) => t.textContent === '1.0',
      );
      const bar = dataGroup('bar');
      return {
        family: fig.getAttribute('data-family') ?? '',
        kind: fig.getAttribute('data-kind') ?? '',
        title: fig.querySelector('h3')?.textContent ?? '',
        svgWidth: box.width,
        svgHeight: box.height,
        lineTitles: linePaths.map((p) => p.querySelector('title')?.textContent ?? ''),
        lineLengths: linePaths.map((p) => p.getTotalLength()),
        areaTitles: areaPaths.map((p) => p.querySelector('title')?.textContent ?? ''),
        areaTop: area ? area.getBoundingClientRect().top : null,
        tickOneY: tick
          ? num(String(tick.getBoundingClientRect().top + tick.getBoundingClientRect().height / 2))
          : null,
        bandPaths: bandPaths.length,
        bandAreaPx: bandPaths.reduce((s, p) => {
          const b = p.getBoundingClientRect();
          return s + b.width * b.height;
        }, 0),
        bars: bar ? bar.querySelectorAll('rect').length : 0,
        legend: [...svg.querySelectorAll('g[aria-label="text"][aria-description="legend"] text')].map(
          (t) => t.textContent ?? '',
        ),
        notes: [...fig.querySelectorAll('figcaption .note')].map((n) => n.textContent ?? ''),
      };
    });
    return {
      figures,
      omitted: [...document.querySelectorAll('ul.omitted li')].map((li) => li.textContent ?? ''),
      scripts: document.querySelectorAll('script').length,
      externalRefs: [...document.querySelectorAll('[src], [href], link')].length,
      metricsText: [...document.querySelectorAll('table')].map((t) => t.textContent ?? '').join(' '),
    };
  });
  // Headless Chromium sometimes answers "Unable to capture screenshot" when the machine is loaded
  // (seen on the shared 2-core runner); the screenshot is an artifact for a human, so it is retried a
  // few times before the test fails on it.
  for (let attempt = 1; ; attempt++) {
    try {
      await page.screenshot({ path: join(OUT, screenshot), fullPage: true });
      break;
    } catch (e) {
      if (attempt >= 4 || !/Unable to capture screenshot/.test(String(e))) throw e;
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
  await page.close();
  return { ...facts, url, figures: facts.figures as FigureFacts[] };
}

function byFamily(figures: FigureFacts[], family: string): FigureFacts {
  const f = figures.find((x) => x.family === family);
  if (!f) throw new Error(`no figure for ${family}; have ${figures.map((x) => x.family).join(', ')}`);
  return f;
}

beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('HTML report in headless Chromium', () => {
  it('single agent-like record: stacked group kinds summing to 1, success line, bar table, no network', async () => {
    const html = join(OUT, 'agent-seed7.html');
    await writeHtmlReport([agentLikeRecord(7)], { html, png: null, sources: ['synthetic/agent-seed7.json'] });
    const page = await openReport(html, 'agent-seed7.png');

    expect(requests.get(page.url)).toEqual([page.url]);
    expect(page.scripts).toBe(0);
    expect(page.externalRefs).toBe(0);
    // Hinted families first in hint order, then the unhinted family.
    expect(page.figures.map((f) => f.family)).toEqual(['group_kind', 'success', 'lag', 'zero_advantage']);
    for (const f of page.figures) {
      expect(f.svgWidth).toBeGreaterThan(300);
      expect(f.svgHeight).toBeGreaterThan(150);
      for (const len of f.lineLengths) expect(len).toBeGreaterThan(100);
    }

    const groups = byFamily(page.figures, 'group_kind');
    expect(groups.kind).toBe('stacked-area');
    expect(groups.title).toBe('Group kinds over training');
    expect(groups.areaTitles).toEqual(['all_wrong', 'mixed', 'all_right']);
    expect(groups.legend).toEqual(['all_wrong', 'mixed', 'all_right']);
    // The three fractions sum to 1 at every update, so the stack's top sits on the 1.0 grid line.
    expect(groups.tickOneY).not.toBeNull();
    expect(Math.abs((groups.areaTop as number) - (groups.tickOneY as number))).toBeLessThan(2);

    expect(byFamily(page.figures, 'success').lineTitles).toEqual(['train']);
    expect(byFamily(page.figures, 'zero_advantage').lineTitles).toEqual(['fraction']);
    expect(byFamily(page.figures, 'lag').bars).toBe(4);
    expect(page.metricsText).toContain('eval_success_after');
    expect(page.metricsText).toContain('0.907');
  });

  it('the request listener does see a request leaving a page (control for the no-network checks)', async () => {
    const html = join(OUT, 'control-external-image.html');
    // Port 9 on loopback: the request is issued (and seen) but goes nowhere off the machine.
    writeFileSync(html, '<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png"></body></html>');
    const page = await openReport(html, 'control-external-image.png');
    expect(requests.get(page.url)).toEqual([page.url, 'http://127.0.0.1:9/x.png']);
  });

  it('multi-seed record: mean line and a visible 95% band per series', async () => {
    const html = join(OUT, 'agent-seeds1-5.html');
    await writeHtmlReport([agentLikeMultiSeed([1, 2, 3, 4, 5])], {
      html,
      png: null,
      sources: ['synthetic/agent-seeds.json'],
    });
    const page = await openReport(html, 'agent-seeds1-5.png');
    expect(requests.get(page.url)).toEqual([page.url]);
    const groups = byFamily(page.figures, 'group_kind');
    expect(groups.kind).toBe('line');
    expect(groups.lineTitles).toEqual(['all_wrong', 'mixed', 'all_right']);
    expect(groups.bandPaths).toBe(3);
    // Seeds shift the curves (shift = seed mod 3), so the band has real width.
    expect(groups.bandAreaPx).toBeGreaterThan(500);
    expect(groups.notes.join(' ')).toContain('95%');
    const success = byFamily(page.figures, 'success');
    expect(success.lineTitles).toEqual(['train']);
    expect(success.bandPaths).toBe(1);
    expect(page.metricsText).toContain('95% CI of mean');
  });

  it('two records overlaid and a record missing a curve family', async () => {
    const a = agentLikeRecord(7);
    const b = agentLikeRecord(8, 30, 2);
    const html = join(OUT, 'compare.html');
    await writeHtmlReport([a, b], { html, png: null, sources: ['a.json', 'b.json'] });
    const page = await openReport(html, 'compare.png');
    expect(requests.get(page.url)).toEqual([page.url]);
    const groups = byFamily(page.figures, 'group_kind');
    expect(groups.kind).toBe('line');
    expect(groups.lineTitles).toEqual([
      'seed 7 lr=0.5 · all_wrong',
      'seed 7 lr=0.5 · mixed',
      'seed 7 lr=0.5 · all_right',
      'seed 8 lr=0.7 · all_wrong',
      'seed 8 lr=0.7 · mixed',
      'seed 8 lr=0.7 · all_right',
    ]);
    expect(byFamily(page.figures, 'success').lineTitles).toEqual(['seed 7 lr=0.5', 'seed 8 lr=0.7']);

    const {
      'group_kind.all_wrong': _w,
      'group_kind.mixed': _m,
      'group_kind.all_right': _r,
      ...rest
    } = a.curves;
    const missing: RunRecord = { ...a, curves: rest };
    const html2 = join(OUT, 'missing-family.html');
    await writeHtmlReport([missing], { html: html2, png: null, sources: ['missing.json'] });
    const page2 = await openReport(html2, 'missing-family.png');
    expect(page2.figures.map((f) => f.family)).toEqual(['success', 'lag', 'zero_advantage']);
    expect(page2.omitted).toHaveLength(1);
    expect(page2.omitted[0]).toContain("'Group kinds over training' omitted");
    expect(page2.omitted[0]).toContain("no curves 'group_kind.*'");
  });

  it('the real agent experiment (seed 7, and seeds 1..3): group kinds over updates and training success', async () => {
    const agent = await loadExperiment('agent');
    const config = resolveConfig(agent, []);
    const single = await agent.run(config, { seed: 7 });
    const html = join(OUT, 'agent-real-seed7.html');
    await writeHtmlReport([single], { html, png: null, sources: ['labs run --experiment agent --seed 7'] });
    const page = await openReport(html, 'agent-real-seed7.png');
    expect(requests.get(page.url)).toEqual([page.url]);
    const groups = byFamily(page.figures, 'group_kind');
    expect(groups.kind).toBe('stacked-area');
    expect(groups.areaTitles).toEqual(['all_wrong', 'mixed', 'all_right']);
    // Every group is exactly one of the three kinds, so the stack reaches 1.0 at every update.
    expect(Math.abs((groups.areaTop as number) - (groups.tickOneY as number))).toBeLessThan(2);
    expect(byFamily(page.figures, 'success').lineTitles).toContain('train');

    const multi = await runSeeds(agent, config, [1, 2, 3]);
    const html2 = join(OUT, 'agent-real-seeds1-3.html');
    await writeHtmlReport([multi], {
      html: html2,
      png: null,
      sources: ['labs run --experiment agent --seeds 1..3'],
    });
    const page2 = await openReport(html2, 'agent-real-seeds1-3.png');
    expect(requests.get(page2.url)).toEqual([page2.url]);
    const groups2 = byFamily(page2.figures, 'group_kind');
    expect(groups2.lineTitles).toEqual(['all_wrong', 'mixed', 'all_right']);
    expect(groups2.bandPaths).toBe(3);
    expect(byFamily(page2.figures, 'success').lineTitles).toContain('train');
  });
});

describe('launchChromium (test/support/browser.ts)', () => {
  it('rejects, naming the path, when no browser can be launched (so beforeAll fails, never skips)', async () => {
    await expect(launchChromium('/nonexistent/chromium')).rejects.toThrow(
      /cannot launch headless Chromium at \/nonexistent\/chromium: /,
    );
  });
});
