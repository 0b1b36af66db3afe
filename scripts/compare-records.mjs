#!/usr/bin/env node
/**
 * Compares two directories of RunRecords (`<experiment>.json`, as written by
 * `labs run --experiment X --seed 7 --json > DIR/X.json`), ignoring `timing`.
 *
 *   node scripts/compare-records.mjs BEFORE_DIR AFTER_DIR [--intended]
 *
 * --intended first applies to BEFORE the renames made on purpose by the refactor of issue 10, so
 * that what is left are changes of values: metric keys `<arm>.<metric>` -> `<metric>.<arm>`,
 * `paired.<arm>_minus_<base>.<metric>` -> `<metric>.<arm>_minus_<base>`, `loss_change_<mode>` ->
 * `loss_change.<mode>`; enum values in snake_case (zero-score, soft-penalty, model-tokens,
 * all-tokens, mis-indexed -> zero_score, ...; verl's loss_agg_mode names are kept); rollout's new
 * option `eval` (default 'sample', the value that was hard-coded) in `config`.
 *
 * For each file present in both: every JSON path whose value differs is listed (exact comparison:
 * the same code must give the same numbers, byte for byte). `config` is compared as a set of keys
 * and values (key order ignored). Exit 0 when everything but timing is identical, 1 otherwise.
 * To capture the BEFORE records of a commit:
 *   git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci && npm run build &&
 *   for e in agent rollout advantage mask aggregation truncation; do
 *     node dist/cli/main.js run --experiment $e --seed 7 --json --out /tmp/base/runs/$e > /tmp/before/$e.json; done)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [before, after] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const intended = process.argv.includes('--intended');

const ENUM_RENAMES = {
  'zero-score': 'zero_score',
  'soft-penalty': 'soft_penalty',
  'model-tokens': 'model_tokens',
  'all-tokens': 'all_tokens',
};
// Arm names also appear in the notes' prose; 'mis-indexed' is renamed only as a whole value (the
// advantage note's prose keeps the word).
const renameEnums = (text) =>
  text
    .replace(/zero-score|soft-penalty|model-tokens|all-tokens/g, (m) => ENUM_RENAMES[m])
    .replaceAll('"mis-indexed"', '"mis_indexed"');

/** The renames of issue 10 applied to a record from before it (see --intended). */
function applyIntendedRenames(r) {
  const arms = new Set((r.tables?.arms ?? []).map((row) => row.arm));
  const metrics = {};
  for (const [key, value] of Object.entries(r.metrics ?? {})) {
    let k = key;
    const paired = /^paired\.(.+_minus_.+)\.([a-z_0-9]+)$/.exec(key);
    const dot = key.indexOf('.');
    if (paired) k = `${paired[2]}.${paired[1]}`;
    else if (dot > 0 && arms.has(key.slice(0, dot))) k = `${key.slice(dot + 1)}.${key.slice(0, dot)}`;
    else if (key.startsWith('loss_change_')) k = `loss_change.${key.slice('loss_change_'.length)}`;
    metrics[renameEnums(k)] = value;
  }
  const out = JSON.parse(renameEnums(JSON.stringify({ ...r, metrics: {} })));
  out.metrics = metrics;
  if (r.experiment === 'rollout' && out.config && !('eval' in out.config)) out.config.eval = 'sample';
  return out;
}
if (!before || !after) {
  process.stderr.write('usage: node scripts/compare-records.mjs BEFORE_DIR AFTER_DIR\n');
  process.exit(2);
}

/** Paths (a.b[3].c) at which `x` and `y` differ; objects compared key by key, order ignored. */
function diff(x, y, path, out) {
  if (out.length > 20) return out;
  if (Object.is(x, y)) return out;
  if (typeof x !== typeof y || x === null || y === null || typeof x !== 'object') {
    out.push(`${path}: ${JSON.stringify(x)} -> ${JSON.stringify(y)}`);
    return out;
  }
  if (Array.isArray(x) !== Array.isArray(y)) {
    out.push(`${path}: array vs object`);
    return out;
  }
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const k of keys) {
    if (!(k in x)) out.push(`${path}.${k}: added ${JSON.stringify(y[k])?.slice(0, 80)}`);
    else if (!(k in y)) out.push(`${path}.${k}: removed`);
    else diff(x[k], y[k], Array.isArray(x) ? `${path}[${k}]` : `${path}.${k}`, out);
  }
  return out;
}

let failed = 0;
const files = readdirSync(before)
  .filter((f) => f.endsWith('.json'))
  .sort();
for (const f of files) {
  let b;
  let a;
  try {
    b = JSON.parse(readFileSync(join(before, f), 'utf8'));
    a = JSON.parse(readFileSync(join(after, f), 'utf8'));
  } catch (e) {
    process.stdout.write(`${f}: cannot compare (${e.message})\n`);
    failed++;
    continue;
  }
  delete b.timing;
  delete a.timing;
  if (intended) b = applyIntendedRenames(b);
  const keyOrder = (o) => JSON.stringify(Object.keys(o ?? {}));
  const orderNote = keyOrder(b.config) === keyOrder(a.config) ? '' : ' (config key order differs)';
  const d = diff(b, a, '', []);
  if (d.length === 0) process.stdout.write(`${f}: identical except timing${orderNote}\n`);
  else {
    failed++;
    process.stdout.write(
      `${f}: ${d.length} difference(s)${orderNote}\n${d.map((l) => `  ${l}`).join('\n')}\n`,
    );
  }
}
process.exit(failed ? 1 : 0);
