// The package's exports map (package.json): `.` is the pure kernels, and the Node-only parts are the
// subpaths `./experiments`, `./audit` and `./report` (docs/architecture.md §2). Run on the built
// dist/ (npm test builds it first), through the package name as a user imports it: Node resolves
// `reasoning-rl-labs/...` from inside this package by its own exports map (a self-reference).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

interface Target {
  types: string;
  default: string;
}
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  name: string;
  main: string;
  types: string;
  exports: Record<string, Target | string>;
};

/** The runtime names each subpath exports (types leave none): a deliberate list, as src/index.ts's. */
const SUBPATHS: Record<string, { source: string; names: string[] }> = {
  './experiments': {
    source: 'src/experiments/index.ts',
    names: ['experimentNames', 'loadExperiment', 'runExperiment', 'runSeeds'],
  },
  './audit': {
    source: 'src/audit/index.ts',
    names: ['AUDIT_DEFAULTS', 'AUDIT_PRESETS', 'CANONICAL_COLUMNS', 'runAudit'],
  },
  './report': {
    source: 'src/report/index.ts',
    names: [
      'PRIME_RL_TOKEN_EXPORT_KEYS',
      'planPlots',
      'primeRlTokenExportLine',
      'primeRlTokenExportLines',
      'tokenExportSequences',
      'writeHtmlReport',
      'writePrimeRlTokenExportStep',
    ],
  },
};

/** Imports `specifier` in a fresh Node from the repository root; returns its sorted export names. */
function exportedNames(specifier: string): string[] {
  const res = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m).sort()));`,
    ],
    { encoding: 'utf8' },
  );
  expect(res.status, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as string[];
}

/**
 * Every module specifier the module graph of `entry` (a built .js file) reaches, following relative
 * static imports, re-exports and dynamic `import()` (a dynamic import runs when its caller does).
 */
function reachedSpecifiers(entry: string): { modules: Set<string>; external: Map<string, string> } {
  const modules = new Set<string>();
  const external = new Map<string, string>(); // specifier -> first module importing it
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (modules.has(file)) continue;
    modules.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(
      /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm,
    )) {
      const spec = (m[1] ?? m[2] ?? m[3]) as string;
      if (spec.startsWith('.')) {
        const target = join(dirname(file), spec);
        expect(existsSync(target), `${file} imports ${spec}`).toBe(true);
        queue.push(target);
      } else if (!external.has(spec)) {
        external.set(spec, file);
      }
    }
  }
  return { modules, external };
}

describe('package exports map', () => {
  it('maps `.` and exactly the three Node-only subpaths to built files with their types', () => {
    expect(Object.keys(pkg.exports).sort()).toEqual([
      '.',
      './audit',
      './experiments',
      './package.json',
      './report',
    ]);
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      expect(Object.keys(target), subpath).toEqual(['types', 'default']); // types first, as Node and tsc read it
      expect(existsSync(target.default), target.default).toBe(true);
      expect(existsSync(target.types), target.types).toBe(true);
    }
    // main/types agree with `.` for tools that do not read exports
    expect(`./${pkg.main}`).toBe((pkg.exports['.'] as Target).default);
    expect(`./${pkg.types}`).toBe((pkg.exports['.'] as Target).types);
  });

  it.each(Object.entries(SUBPATHS))(
    '%s imports through the package name and exports its list',
    (subpath, { source, names }) => {
      const target = pkg.exports[subpath] as Target;
      expect(target.default).toBe(`./${source.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js')}`);
      expect(exportedNames(`${pkg.name}${subpath.slice(1)}`)).toEqual([...names].sort());
    },
  );

  it('the pure entry `.` imports, statically or dynamically, no Node built-in and no Node-only layer', () => {
    const { modules, external } = reachedSpecifiers('dist/index.js');
    expect(modules.size).toBeGreaterThan(20); // the walk followed the kernels' imports
    const builtins = [...external]
      .filter(([spec]) => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0] as string))
      .map(([spec, file]) => `${file} imports ${spec}`);
    expect(builtins).toEqual([]);
    const nodeOnlyLayers = [...modules].filter((f) => /^dist\/(experiments|audit|report|cli)\//.test(f));
    expect(nodeOnlyLayers).toEqual([]);
    // it still loads through the package name, with the kernels in it
    expect(exportedNames(pkg.name)).toContain('grpoAdvantage');
  });

  it('the walk sees a Node built-in where there is one (the audit subpath reads files)', () => {
    const { external } = reachedSpecifiers((pkg.exports['./audit'] as Target).default.slice(2));
    expect([...external.keys()].some((s) => s.startsWith('node:'))).toBe(true);
  });
});
