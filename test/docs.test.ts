// The documentation as a test: README stays a front page, the generated tables match their records,
// every relative link resolves, every docs/ page and section cited by code exists, and the README's
// library example is the checked-in test/readme/example.ts and runs.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { markdownFiles } from '../scripts/docs.js';
import { findRegions, renderDocument } from '../scripts/docsTables.js';

const read = (p: string) => readFileSync(p, 'utf8');
const readJson = (p: string) => JSON.parse(read(p));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function headings(markdown: string): string[] {
  return withoutCode(markdown)
    .split('\n')
    .flatMap((l) => {
      const m = /^#{1,6}\s+(.*)$/.exec(l);
      return m ? [m[1] as string] : [];
    });
}

/** The text with fenced and indented code blocks blanked out (links there are not links). */
function withoutCode(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((l) => {
      if (l.startsWith('```')) {
        fenced = !fenced;
        return '';
      }
      return fenced || /^ {4}/.test(l) ? '' : l;
    })
    .join('\n');
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

describe('README', () => {
  it('is a front page: under 10 KB', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThan(10 * 1024);
  });

  describe('the three commands show their real output', () => {
    // Each sample block under "## Three commands", in order, and the command it samples.
    const commands = [
      ['run', '--experiment', 'agent', '--seed', '7', '--no-progress'],
      ['conformance', 'test/golden/verl-core-algos.json'],
      ['audit', 'examples/generic-rollouts.jsonl', '--preset', 'generic'],
    ];
    const section = read('README.md').split('## Three commands')[1]?.split('\n## ')[0] ?? '';
    // an indented block may contain blank lines; it ends at the next unindented text
    const blocks: string[][] = [];
    let open = false;
    for (const line of section.split('\n')) {
      if (line.startsWith('    ')) {
        if (!open) blocks.push([]);
        open = true;
        blocks[blocks.length - 1]?.push(line.slice(4));
      } else if (line.trim() !== '') open = false;
    }
    // wall times differ run to run: `(162 ms)`, `4 step(s), 0.946 s)`; so does the run directory's
    // time stamp: `runs/agent__7__2026-12-02T22-01-36-951Z/` reads `runs/agent__7__<time>/`
    const normalise = (line: string) =>
      line
        .trimEnd()
        .replace(/[\d.]+ m?s\)/g, 'TIME)')
        .replace(/__\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\//g, '__<time>/');
    let outputs: string[] = [];

    beforeAll(async () => {
      const run = promisify(execFile);
      outputs = await Promise.all(
        commands.map(
          async (args) =>
            (
              await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
                encoding: 'utf8',
              })
            ).stdout,
        ),
      );
    });

    it.each(commands.map((c, i) => [c.join(' '), i] as const))('labs %s', (_name, i) => {
      const sample = (blocks[i] ?? []).filter((l) => l !== '...');
      expect(sample.length).toBeGreaterThanOrEqual(3);
      const printed = new Set((outputs[i] ?? '').split('\n').map(normalise));
      expect(sample.map(normalise).filter((l) => !printed.has(l))).toEqual([]);
    });
  });

  describe('library example', () => {
    afterEach(() => vi.restoreAllMocks());

    it('is test/readme/example.ts, with the package name as import', () => {
      const block = /```ts\n([\s\S]*?)```/.exec(read('README.md'))?.[1];
      expect(block).toBeDefined();
      const file = read('test/readme/example.ts').replace("'../../src/index.js'", "'reasoning-rl-labs'");
      expect(block).toBe(file);
    });

    it('runs and prints the advantages its comment promises', async () => {
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      await import('./readme/example.js');
      const printed = log.mock.calls[0]?.[0] as Float32Array;
      const a = 0.8660238981246948; // (1 - 0.5) / (sqrt(1/3) + 1e-6) in float32
      expect(Array.from(printed)).toEqual([a, a, a, -a, -a, -a, a, a, 0, -a, -a, -a]);
    });
  });
});

describe('generated tables', () => {
  const files = markdownFiles('.');

  it('finds the docs pages and their generated regions', () => {
    expect(files).toContain('docs/experiments/rollout.md');
    const regions = files.flatMap((f) => findRegions(read(f), f));
    expect(regions.length).toBeGreaterThanOrEqual(15);
  });

  it.each(files)('%s matches its records (run npm run docs when this fails)', (file) => {
    const text = read(file);
    expect(renderDocument(text, file, readJson)).toBe(text);
  });

  it('a changed record makes a table stale', () => {
    const file = 'docs/experiments/truncation.md';
    const text = read(file);
    const changed = (p: string) => {
      const r = readJson(p);
      if (p.endsWith('truncation-seed7.json')) r.tables.arms[0].eval_success = 0.5;
      return r;
    };
    const after = renderDocument(text, file, changed);
    expect(after).not.toBe(text);
    const arm = readJson('docs/records/truncation-seed7.json').tables.arms[0].arm;
    expect(after).toContain(`| ${arm} | 0.5 |`);
  });

  it('refuses a region that is never closed, or names a table the record lacks', () => {
    expect(() => findRegions('<!-- generated:table tables.arms from x.json -->\n', 'a.md')).toThrow(
      'a.md line 1: generated region is never closed',
    );
    const doc = '<!-- generated:table tables.nope from docs/records/mask-seed7.json -->\n<!-- /generated -->';
    expect(() => renderDocument(doc, 'a.md', readJson)).toThrow('tables.nope is missing');
  });
});

/**
 * Pages whose multi-seed tables have no manifest in this branch yet, and why (each entry is a known
 * gap, not a pass: remove it when the manifest lands).
 */
const AWAITING_MANIFEST: Record<string, string> = {};

describe('findings tables (docs/findings/*.results.json)', () => {
  const dir = 'docs/findings';
  const manifests = readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith('.results.json'));
  const results = readdirSync(dir).filter((f) => f.endsWith('.results.json'));
  const pages = readdirSync('docs/experiments')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/experiments/${f}`);

  it.each(results)('%s is up to date with its manifest and rendered in its page', (name) => {
    const r = readJson(join(dir, name));
    const manifest = readJson(r.manifest);
    expect(r.manifest).toBe(join(dir, name.replace('.results.json', '.json')));
    // a claim or seed set changed in the manifest but not rerun makes the results stale
    expect([r.discovery.seeds, r.confirmation.seeds]).toEqual([manifest.discovery, manifest.confirmation]);
    expect(r.claims.map((c: { id: string }) => c.id)).toEqual(
      manifest.claims.map((c: { id: string }) => c.id),
    );
    expect(r.tables.map((t: { id: string }) => t.id)).toEqual(
      (manifest.tables ?? []).map((t: { id: string }) => t.id),
    );
    expect((r.goals ?? []).map((g: { id: string }) => g.id)).toEqual(
      (manifest.goals ?? []).map((g: { id: string }) => g.id),
    );
    expect(r.claims.every((c: { status: string }) => c.status !== 'pending')).toBe(true);
    const regions = findRegions(read(manifest.doc), manifest.doc).filter((g) => g.source === join(dir, name));
    expect(regions.some((g) => g.name === 'findings-claims')).toBe(true);
    // a manifest's goals are shown where its claims are
    expect(regions.some((g) => g.name === 'findings-goals')).toBe((manifest.goals ?? []).length > 0);
  });

  it('every multi-seed table in docs/experiments/ names its manifest and the one command that rebuilds it', () => {
    const problems: string[] = [];
    for (const page of pages) {
      if (page in AWAITING_MANIFEST) continue;
      const text = read(page);
      const generated = new Set<number>();
      let inside = false;
      text.split('\n').forEach((line, i) => {
        if (line.startsWith('<!-- generated:table findings-')) inside = true;
        else if (line === '<!-- /generated -->') inside = false;
        else if (inside) generated.add(i);
      });
      // a hand-written table row with an interval [a, b] is a multi-seed table
      const hand = text
        .split('\n')
        .flatMap((line, i) =>
          line.startsWith('|') && /\[[-−]?[\d.]+(e-?\d+)?, [-−]?[\d.]/.test(line) && !generated.has(i)
            ? [i + 1]
            : [],
        );
      const named = manifests.filter(
        (m) =>
          text.includes(`docs/findings/${m}`) &&
          text.includes(`npm run findings -- ${m.replace('.json', '')}`),
      );
      const hasGenerated = generated.size > 0;
      if ((hand.length || hasGenerated) && named.length === 0)
        problems.push(`${page}: multi-seed tables but no manifest named with its npm run findings command`);
      if (hand.length && !/confirmation not yet run/i.test(text))
        problems.push(
          `${page}: hand-written multi-seed table rows (lines ${hand.slice(0, 5).join(', ')}) without "confirmation not yet run"`,
        );
    }
    expect(problems).toEqual([]);
  });
});

describe('links', () => {
  const files = [...markdownFiles('.'), 'examples/README.md', 'src/core/DEVIATIONS.md'];

  it.each(files)('every relative link in %s resolves (file and anchor)', (file) => {
    const broken: string[] = [];
    for (const m of withoutCode(read(file)).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const target = m[1] as string;
      if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const resolved = path === '' ? file : normalize(join(dirname(file), path));
      if (!existsSync(resolved)) {
        broken.push(`${target} (no ${resolved})`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md')) {
        if (!headings(read(resolved)).map(slug).includes(anchor))
          broken.push(`${target} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('citations in code', () => {
  const sources = ['src', 'test', 'bench', 'scripts']
    .flatMap((d) => walk(d))
    .filter((f) => /\.(ts|mjs|md)$/.test(f) && !f.endsWith(join('test', 'docs.test.ts')));
  const cite = /docs\/[\w./-]+\.md/g;
  const sectioned = /(docs\/[\w./-]+\.md)((?:,? (?:and )?§\d+(?:\.\d+)*)+)/g;

  it('every docs/ page cited in src, test, bench or scripts exists', () => {
    const cited = new Set(sources.flatMap((f) => [...read(f).matchAll(cite)].map((m) => m[0])));
    expect(cited.size).toBeGreaterThanOrEqual(2);
    expect([...cited].filter((p) => !existsSync(p))).toEqual([]);
  });

  it('every cited § exists in the cited page, and no § stands without a page', () => {
    const problems: string[] = [];
    let citations = 0;
    for (const f of sources) {
      const text = read(f);
      for (const m of text.matchAll(sectioned)) {
        const page = m[1] as string;
        const numbers = headings(existsSync(page) ? read(page) : '').flatMap((h) => {
          const n = /^(\d+(?:\.\d+)*)\.?\s/.exec(h);
          return n ? [n[1] as string] : [];
        });
        for (const s of (m[2] as string).matchAll(/§(\d+(?:\.\d+)*)/g)) {
          citations++;
          if (!numbers.includes(s[1] as string)) problems.push(`${f}: ${page} §${s[1]} does not exist`);
        }
      }
      const all = [...text.matchAll(/§/g)].length;
      const attached = [...text.matchAll(sectioned)].reduce(
        (n, m) => n + [...(m[2] as string).matchAll(/§/g)].length,
        0,
      );
      if (all !== attached) problems.push(`${f}: ${all - attached} § without a docs/ page before it`);
      if (/\bDESIGN\.md\b|spec\/verl-semantics/.test(text))
        problems.push(`${f}: cites a file outside the repo`);
    }
    expect(citations).toBeGreaterThanOrEqual(10);
    expect(problems).toEqual([]);
  });
});
