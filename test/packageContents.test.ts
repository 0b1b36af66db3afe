// What the package ships: every runtime dependency is used, every module under src/ is reachable
// from the entry points (so nothing test-only is built into dist/), and no module exports a value
// nobody uses.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const isTest = (f: string) => f.endsWith('.test.ts');
const sources = walk('src').filter((f) => !isTest(f));
const text = new Map(sources.map((f) => [f, readFileSync(f, 'utf8')]));
const IMPORT = /(?:import|export)[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

function specifiers(file: string): string[] {
  return [...(text.get(file) as string).matchAll(IMPORT)].map((m) => (m[1] ?? m[2]) as string);
}

describe('package contents', () => {
  it('every runtime dependency is imported by the shipped code', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
    const imported = new Set(
      sources
        .flatMap(specifiers)
        .filter((s) => !s.startsWith('.'))
        .map((s) =>
          s
            .split('/')
            .slice(0, s.startsWith('@') ? 2 : 1)
            .join('/'),
        ),
    );
    expect(Object.keys(pkg.dependencies).filter((d) => !imported.has(d))).toEqual([]);
  });

  it('every module under src/ is reachable from an entry point (test helpers live in test/)', () => {
    const seen = new Set<string>();
    // The library (its pure entry and the Node-only subpaths of package.json's exports), the CLI
    // (the installed bin, and main.ts run from source and bundled), and the worker thread `--jobs`
    // starts (loaded by URL, not imported).
    const queue = [
      join('src', 'index.ts'),
      join('src', 'experiments', 'index.ts'),
      join('src', 'audit', 'index.ts'),
      join('src', 'report', 'index.ts'),
      join('src', 'cli', 'runtime', 'bin.ts'),
      join('src', 'cli', 'main.ts'),
      join('src', 'cli', 'runtime', 'seedWorker.ts'),
    ];
    while (queue.length > 0) {
      const file = queue.pop() as string;
      if (seen.has(file) || !text.has(file)) continue;
      seen.add(file);
      for (const s of specifiers(file)) {
        if (s.startsWith('.')) queue.push(join(file, '..', s).replace(/\.js$/, '.ts'));
      }
    }
    expect(sources.filter((f) => !seen.has(f))).toEqual([]);
  });

  it('no module exports a function or constant that nothing in src, test or bench uses', () => {
    const everything = [...walk('src'), ...walk('test'), ...walk('bench')].map((f) => [
      f,
      readFileSync(f, 'utf8'),
    ]) as [string, string][];
    const unused: string[] = [];
    for (const [file, body] of text) {
      for (const m of body.matchAll(/^export (?:async )?(?:function|const|class|let) (\w+)/gm)) {
        const name = m[1] as string;
        const word = new RegExp(`\\b${name}\\b`, 'g');
        const uses = everything.reduce(
          (n, [f, t]) => n + (t.match(word)?.length ?? 0) - (f === file ? 1 : 0),
          0,
        );
        if (uses === 0) unused.push(`${file}: ${name}`);
      }
    }
    expect(unused).toEqual([]);
  });
});

/** The text of `path` inside a .tgz (ustar entries: 512-byte headers, name, octal size, prefix). */
function fileInTarball(tgz: string, path: string): string | null {
  const tar = gunzipSync(readFileSync(tgz));
  const field = (at: number, len: number) =>
    tar
      .subarray(at, at + len)
      .toString('utf8')
      .replace(/\0.*$/s, '');
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = field(at, 100);
    if (name === '') break;
    const prefix = field(at + 345, 155);
    const size = Number.parseInt(field(at + 124, 12).trim() || '0', 8);
    if ((prefix ? `${prefix}/${name}` : name) === path) {
      return tar.subarray(at + 512, at + 512 + size).toString('utf8');
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return null;
}

describe('the packed package', () => {
  // Installing the tarball into another project used to print npm's install-script warning
  // ('1 package has install scripts not yet covered by allowScripts: ... (prepare: npm run build)'):
  // npm counts a dependency's prepare like its preinstall, install and postinstall. The build runs
  // before packing (prepack) and before the tests (pretest), neither of which npm runs or flags
  // when the package is installed.
  it('has no install-time script, and builds dist/ before packing and before npm test', () => {
    const dir = mkdtempSync(join(tmpdir(), 'labs-pack-'));
    try {
      // --ignore-scripts: pack the dist/ already built (npm test builds it first), in a second
      const res = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
        encoding: 'utf8',
      });
      expect(res.status, res.stderr).toBe(0);
      const [info] = JSON.parse(res.stdout) as { filename: string; files: { path: string }[] }[];
      const paths = new Set(info?.files.map((f) => f.path));
      for (const p of ['dist/cli/main.js', 'dist/index.js', 'package.json']) expect(paths).toContain(p);
      const packed = JSON.parse(
        fileInTarball(join(dir, info?.filename as string), 'package/package.json') ?? 'null',
      ) as { scripts: Record<string, string> };
      const installTime = ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare'];
      expect(Object.keys(packed.scripts).filter((s) => installTime.includes(s))).toEqual([]);
      expect(packed.scripts.prepack).toBe('npm run build');
      expect(packed.scripts.pretest).toBe('npm run build');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
