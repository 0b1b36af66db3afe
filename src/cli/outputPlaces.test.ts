import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LabError } from '../core/errors.js';
import { exitCodeFor } from './errorOutput.js';
import { canonicalPath, checkOutputPlaces, type InputPlace, type OutputPlace } from './outputPlaces.js';

function refusal(places: OutputPlace[], inputs: InputPlace[] = []): LabError | null {
  try {
    checkOutputPlaces(places, inputs);
  } catch (e) {
    return e as LabError;
  }
  return null;
}

describe('checkOutputPlaces', () => {
  const root = mkdtempSync(join(tmpdir(), 'labs-places-'));
  const file = join(root, 'a-file');
  writeFileSync(file, 'x');
  mkdirSync(join(root, 'a-dir'));

  it('accepts writable places and creates nothing', () => {
    expect(
      refusal([
        { flag: '--out', path: join(root, 'new', 'deep', 'dir'), kind: 'dir', files: ['record.json'] },
        { flag: '--html', path: join(root, 'new2', 'r.html'), kind: 'file' },
        { flag: '--png', path: join(root, 'a-dir'), kind: 'dir' },
      ]),
    ).toBeNull();
    expect(readdirSync(root).sort()).toEqual(['a-dir', 'a-file']);
    expect(readdirSync(join(root, 'a-dir'))).toEqual([]);
  });

  it.each([
    [
      'a directory given as --html',
      { flag: '--html', path: 'a-dir', kind: 'file' },
      /is a directory; give a file name/,
    ],
    [
      'a file given as --out',
      { flag: '--out', path: 'a-file', kind: 'dir' },
      /exists and is not a directory/,
    ],
    [
      'a file given as --png',
      { flag: '--png', path: 'a-file', kind: 'dir' },
      /exists and is not a directory/,
    ],
    [
      'a file as a parent',
      { flag: '--out', path: 'a-file/x/y', kind: 'dir' },
      /a parent directory is a file/,
    ],
    [
      'a file as the parent of --html',
      { flag: '--html', path: 'a-file/r.html', kind: 'file' },
      /a parent directory is a file/,
    ],
  ] as const)('refuses %s with a usage error naming the flag', (_what, place, why) => {
    const e = refusal([{ ...place, path: join(root, place.path) }]);
    expect(e?.code).toBe('BAD_CLI');
    expect(e?.message.startsWith(`${place.flag} ${join(root, place.path)}: `)).toBe(true);
    expect(e?.message).toMatch(why);
    expect(e?.message).toMatch(/; nothing was run$/);
    expect(e?.details).toMatchObject({ field: place.flag });
    expect(exitCodeFor(e)).toBe(2);
  });

  it.skipIf(!existsSync('/proc/self'))('refuses procfs places at once (mkdir -p would loop there)', () => {
    const out = refusal([{ flag: '--out', path: '/proc/labs-nope/x', kind: 'dir' }]);
    expect(out?.message).toBe(
      '--out /proc/labs-nope/x: cannot create the directory /proc/labs-nope (ENOENT); nothing was run',
    );
    const html = refusal([{ flag: '--html', path: '/proc/labs-x.html', kind: 'file' }]);
    expect(html?.message).toMatch(/^--html \/proc\/labs-x\.html: cannot create files in \/proc \(/);
  });

  it('refuses an output that is an input, through a symbolic or a hard link', () => {
    const input = join(root, 'in.json');
    writeFileSync(input, '{}');
    symlinkSync(input, join(root, 'sym.json'));
    linkSync(input, join(root, 'hard.json'));
    for (const out of ['in.json', 'sym.json', 'hard.json', './a-dir/../in.json']) {
      const e = refusal(
        [{ flag: '--html', path: join(root, out), kind: 'file' }],
        [{ flag: 'RECORD', path: input }],
      );
      expect(e?.code, out).toBe('BAD_CLI');
      expect(e?.message).toContain(`would overwrite the input ${input}`);
    }
    // a directory place writing a file that is the input
    const e = refusal(
      [{ flag: '--out', path: root, kind: 'dir', files: ['in.json'] }],
      [{ flag: 'PATH', path: join(root, 'sym.json') }],
    );
    expect(e?.message).toContain('(its in.json)');
    // --png writes NN-family.png: an input of that name in the directory would be replaced
    writeFileSync(join(root, 'a-dir', '01-x.png'), '');
    const png = refusal(
      [{ flag: '--png', path: join(root, 'a-dir'), kind: 'dir', filePattern: /^\d{2,}-.*\.png$/ }],
      [{ flag: 'RECORD', path: join(root, 'a-dir', '01-x.png') }],
    );
    expect(png?.message).toContain('would overwrite the input');
  });

  it('refuses two outputs that are the same file', () => {
    const e = refusal([
      { flag: '--out', path: join(root, 'o'), kind: 'dir', files: ['record.json'] },
      { flag: '--html', path: join(root, 'o', 'record.json'), kind: 'file' },
    ]);
    expect(e?.message).toMatch(/^--html .*: is the same file as --out's .*record\.json; nothing was run$/);
  });

  it('canonicalPath resolves links in the existing part and keeps the missing tail', () => {
    symlinkSync(join(root, 'a-dir'), join(root, 'link-dir'));
    expect(canonicalPath(join(root, 'link-dir', 'missing', 'f'))).toBe(
      join(canonicalPath(root), 'a-dir', 'missing', 'f'),
    );
  });
});
