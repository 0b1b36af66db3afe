// The architecture of docs/architecture.md §2 as a test: each layer imports only from layers before it, and
// only src/cli prints or exits.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const LAYERS = [
  'core',
  'random',
  'stats',
  'envs',
  'policy',
  'train',
  'experiments',
  'audit',
  'report',
  'cli',
] as const;

function layerOf(file: string): number {
  const rel = relative('src', file).replace(/\\/g, '/');
  if (rel === 'random.ts' || rel === 'random.test.ts') return LAYERS.indexOf('random');
  if (rel === 'index.ts') return LAYERS.length; // the public index may re-export anything
  const top = rel.split('/')[0] as (typeof LAYERS)[number];
  return LAYERS.indexOf(top);
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const sources = walk('src').filter((f) => !f.endsWith('.test.ts'));

describe('layering (docs/architecture.md §2)', () => {
  it('every source file sits in a known layer', () => {
    expect(sources.filter((f) => layerOf(f) < 0)).toEqual([]);
  });

  it('no file imports from a later layer', () => {
    const violations: string[] = [];
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(
        /(?:import|export)[^'"]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g,
      )) {
        const spec = (m[1] ?? m[2]) as string;
        const target = join(file, '..', spec).replace(/\.js$/, '.ts');
        if (layerOf(target) > layerOf(file)) violations.push(`${file} imports ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('only src/cli prints or exits', () => {
    const offenders = sources
      .filter((f) => !f.startsWith(join('src', 'cli')))
      .filter((f) =>
        /\bconsole\.|process\.(stdout|stderr)\.write|process\.exit\b/.test(readFileSync(f, 'utf8')),
      );
    expect(offenders).toEqual([]);
  });
});
