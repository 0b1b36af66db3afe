// Issue 26 item 3: every command option is declared once, in its command's table, and the help,
// the parsed values and docs/cli.md's synopses all come from that table.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderSynopsis } from '../scripts/docsTables.js';
import { flagOption } from '../src/cli/commandOptions.js';
import { COMMANDS, type CommandSpec } from '../src/cli/commandTables.js';
import { parseCli } from '../src/cli/parse.js';
import { LabError } from '../src/core/errors.js';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

/** Source text without comments (a doc comment's example is not a declaration). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
const sources = walk('src/cli').map((file) => ({ file, text: code(readFileSync(file, 'utf8')) }));

/** The flag of every option builder call in src/cli (`numberOption(\n  '--seed'` → `--seed`). */
const BUILDER = /\b(?:flag|text|number|choice|list|parsed|numberList|family)Option\(\s*'(--[\w<>-]+)'/g;

describe('command options are declared once', () => {
  it('only the generator calls commander to declare an option', () => {
    const declaring = /\.option\(|\.requiredOption\(|new Option\(|\.addOption\(/;
    const found = sources
      .filter(({ file, text }) => declaring.test(text) && !file.endsWith(join('cli', 'commandOptions.ts')))
      .map(({ file }) => file);
    expect(found).toEqual([]);
  });

  it('each flag is declared by exactly one builder call in src/cli', () => {
    const counts = new Map<string, string[]>();
    for (const { file, text } of sources)
      for (const m of text.matchAll(BUILDER))
        counts.set(m[1] as string, [...(counts.get(m[1] as string) ?? []), file]);
    expect(counts.size).toBeGreaterThanOrEqual(40);
    expect([...counts].filter(([, files]) => files.length > 1)).toEqual([]);
    // and every flag a command accepts comes from one of those calls
    const declared = new Set(counts.keys());
    const accepted = COMMANDS.flatMap((c) =>
      Object.values(c.options).map((o) => o.long.replace('<name>', '')),
    );
    expect(accepted.filter((f) => !declared.has(f))).toEqual([]);
  });

  it('no flag appears twice in one command', () => {
    for (const c of COMMANDS) {
      const flags = Object.values(c.options).map((o) => o.long);
      expect(new Set(flags).size, c.name).toBe(flags.length);
    }
  });
});

describe("docs/cli.md's synopses", () => {
  const doc = readFileSync('docs/cli.md', 'utf8');

  it('are generated regions that list every flag of every command', () => {
    expect(doc).toContain('<!-- generated:synopsis commands -->');
    expect(doc).toContain('<!-- generated:synopsis audit -->');
    const overview = renderSynopsis('commands');
    expect(doc).toContain(overview);
    for (const c of COMMANDS)
      for (const o of Object.values(c.options)) expect(overview, `${c.name} ${o.long}`).toContain(o.long);
  });

  it('go stale when a table changes (test/docs.test.ts then fails on docs/cli.md)', () => {
    const changed: CommandSpec[] = COMMANDS.map((c) =>
      c.name === 'list' ? { ...c, options: { ...c.options, verbose: flagOption('--verbose', 'x') } } : c,
    );
    const after = renderSynopsis('commands', changed);
    expect(after).not.toBe(renderSynopsis('commands'));
    expect(after).toContain('labs list [--json] [--verbose]');
    expect(() => renderSynopsis('nope')).toThrow("unknown command 'nope'");
  });
});

function usageError(argv: string[]): LabError {
  try {
    parseCli(argv);
  } catch (e) {
    if (e instanceof LabError) return e;
    throw e;
  }
  throw new Error(`expected labs ${argv.join(' ')} to be refused`);
}

describe('options that would be ignored are refused', () => {
  it.each([
    ['--reward', 'r'],
    ['--pass-value', '0.5'],
    ['--zero-std-tol', '0.1'],
    ['--max-response-length', '100'],
    ['--watch-interval', '2'],
  ])('%s with a token-level preset', (flag, value) => {
    const e = usageError(['audit', 'd', '--preset', 'nemo-rl', flag, value]);
    expect([e.code, e.message]).toEqual([
      'BAD_CLI',
      `${flag} applies to the reward presets (verl, trl, generic), not the token-level 'nemo-rl'`,
    ]);
    expect(parseCli(['audit', 'd', '--preset', 'verl', flag, value])).toMatchObject({ command: 'audit' });
  });

  it('--shard with neither --seeds nor --sweep (a single seed has nothing to split)', () => {
    const e = usageError(['run', '-e', 'agent', '--shard', '1/2', '--out', 'x']);
    expect(e.message).toBe('--shard splits the runs of --seeds or --sweep; give one of them');
    expect(
      parseCli(['run', '-e', 'agent', '--sweep', 'lr=0.1,0.2', '--shard', '1/2', '--out', 'x']),
    ).toMatchObject({
      shard: { index: 1, count: 2 },
    });
  });
});
