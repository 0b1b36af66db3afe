// The browser of the end-to-end tests: the headless Chromium that ships, brotli-compressed, inside the
// @sparticuz/chromium npm package (a devDependency pinned in package.json). `npm ci` installs it from
// the registry tarball with no download and no install script; the first launch inflates it (~2 s)
// into a directory of this checkout, so nothing else on the machine is needed or shared.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Chromium from '@sparticuz/chromium';
import { type Browser, chromium } from 'playwright-core';

/** Where the packaged browser is inflated (inside node_modules, so `npm ci` starts it afresh). */
export const BROWSER_DIR = resolve('node_modules/.cache/labs-chromium');

/** Flags for a headless run with no network of its own (this machine has none) and no GPU. */
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking'];

/**
 * Path of the packaged Chromium, inflated on first use (one test file launches it, so no two
 * processes inflate at once). The package inflates into `os.tmpdir()`
 * and reuses whatever `chromium` file it finds there, so TMPDIR points at a directory of ours
 * for the call (another project's /tmp/chromium is never picked up).
 */
export async function packagedChromiumPath(): Promise<string> {
  const done = join(BROWSER_DIR, '.inflated');
  // An inflation cut short (Ctrl-C) leaves a truncated binary that the package would reuse: start over.
  if (!existsSync(done)) rmSync(BROWSER_DIR, { recursive: true, force: true });
  mkdirSync(BROWSER_DIR, { recursive: true });
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = BROWSER_DIR;
  try {
    const path = await Chromium.executablePath();
    writeFileSync(done, `${path}\n`);
    return path;
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

/**
 * Launches headless Chromium through playwright-core: the packaged one by default, or
 * `executablePath`. Rejects (never resolves to a stand-in) when no browser starts, with the path
 * and playwright's reason, so a test that needs it fails instead of skipping.
 */
export async function launchChromium(executablePath?: string): Promise<Browser> {
  const path = executablePath ?? (await packagedChromiumPath());
  try {
    return await chromium.launch({ executablePath: path, args: ARGS });
  } catch (e) {
    const reason = (e as Error).message.split('\n')[0];
    throw new Error(`cannot launch headless Chromium at ${path}: ${reason}`, { cause: e });
  }
}
