/**
 * Names of the bundled CLI's files in dist/cli (written by scripts/build.mjs, read by bin.ts): the
 * bundle itself, the grammar that answers `--help`, and V8's code cache for the bundle, named by the hash the build wrote on the bundle's last
 * line (`//# labs-bundle-id <hex>`), so a cache only ever goes with the exact text it was made from.
 */
export const BUNDLE_FILE = 'labs.bundle.js';

/** The command-line grammar alone (parse.ts and commander) as one CommonJS file, for `labs --help`. */
export const GRAMMAR_FILE = 'labs.grammar.js';

const ID_LINE = /\/\/# labs-bundle-id ([0-9a-f]{8,64})\s*$/;

/** The code-cache file name for this bundle text, or null when the text carries no build id. */
export function bundleCacheFile(source: string): string | null {
  const id = ID_LINE.exec(source.slice(-100))?.[1];
  return id ? `labs.bundle.${id}.v8cache` : null;
}
