/**
 * Group labels -> group ids, and per-group statistics.
 *
 * Two ways to turn labels into groups, because verl has two:
 *  - {@link factorizeLabels}: Python-dict equality (what verl's loop estimators do with `index[i]` as a
 *    dict key). `"1"` and `"01"` are different groups, `1` and `"1"` are different groups. Dense ids
 *    0..G-1 in order of first appearance.
 *  - {@link asTorchIndex}: verl's `verl/utils/groupwise.py::as_torch_index`, used by the vectorized
 *    estimators. Numeric strings are coerced to integers (`"1"` and `"01"` merge), integers are kept
 *    as they are (not compacted), other labels are factorised in sorted order.
 */
import { checkLabels, type GroupLabel, type GroupLabels } from './batch.js';
import { LabError } from './errors.js';

/** Dense group ids per row, plus the number of groups and their sizes. */
export interface GroupIds {
  /** Group id of each row, 0..groups-1, numbered in order of first appearance. */
  ids: Int32Array;
  groups: number;
  /** Number of rows in each group. */
  sizes: Int32Array;
  /** The label of each group (first row's label). */
  labels: GroupLabel[];
}

/**
 * Factorises length-B labels into dense ids 0..G-1 in order of first appearance, by exact equality
 * (JS `Map` keys: `1` and `"1"` differ, as Python dict keys do) — the grouping of verl's loop
 * estimators, which collect scores in `id2score[index[i]]`. O(B) with one hash lookup per row;
 * validates the labels first (SHAPE_MISMATCH length, BAD_VALUE label).
 */
export function factorizeLabels(labels: GroupLabels, rows: number, field = 'index'): GroupIds {
  checkLabels(labels, rows, field);
  const ids = new Int32Array(rows);
  const seen = new Map<GroupLabel, number>();
  const groupLabels: GroupLabel[] = [];
  const counts: number[] = [];
  for (let i = 0; i < rows; i++) {
    const label = labels[i] as GroupLabel;
    let id = seen.get(label);
    if (id === undefined) {
      id = groupLabels.length;
      seen.set(label, id);
      groupLabels.push(label);
      counts.push(0);
    }
    ids[i] = id;
    counts[id] = (counts[id] as number) + 1;
  }
  return { ids, groups: groupLabels.length, sizes: Int32Array.from(counts), labels: groupLabels };
}

/**
 * The rows of each group, `members[g]` ascending, for groups numbered as in `groups.ids`. Rows for
 * which `keep(row)` is false are left out (their group may then be empty).
 */
export function groupMembers(groups: GroupIds, keep?: (row: number) => boolean): number[][] {
  const members: number[][] = Array.from({ length: groups.groups }, () => []);
  for (let row = 0; row < groups.ids.length; row++) {
    if (keep === undefined || keep(row)) (members[groups.ids[row] as number] as number[]).push(row);
  }
  return members;
}

/** Python `int(str)` accepts surrounding whitespace, a sign, and `_` between digits. */
const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

function pyInt(s: string): number | undefined {
  if (!PY_INT.test(s)) return undefined;
  const v = Number(s.trim().replaceAll('_', ''));
  // Beyond 2^53 a JS number cannot hold the int64 numpy would produce; fall back to factorisation.
  return Number.isSafeInteger(v) ? v : undefined;
}

/** numpy's unicode sort order: by code point (JS `<` compares UTF-16 units, which differs above U+FFFF). */
function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0) as number;
    const cy = y.value.codePointAt(0) as number;
    if (cx !== cy) return cx - cy;
  }
}

/**
 * verl's `as_torch_index(index)` for a list of labels (the uid array of the trainer):
 *  1. all labels integers -> returned as they are (not compacted to 0..G-1);
 *  2. all labels numbers, each within 1e-6 of an integer -> rounded;
 *  3. otherwise every label is read as a string (numbers as their decimal text) and, if every string
 *     is a Python int literal (`"1"`, `"01"`, `" 7 "`), converted (so `"1"` and `"01"` merge);
 *     a list of non-integer numbers is truncated toward zero here, as numpy's `astype(int64)` does
 *     (so labels 1.2 and 1.7 merge: a verl pitfall reproduced on purpose);
 *  4. otherwise factorised: `np.unique` order (sorted by code point), ids 0..G-1.
 * Returns a plain number array (verl returns an int64 tensor).
 */
export function asTorchIndex(labels: GroupLabels, field = 'index'): number[] {
  const n = labels.length;
  checkLabels(labels, n, field);
  const out = new Array<number>(n);
  let allNumbers = true;
  for (let i = 0; i < n; i++) if (typeof labels[i] !== 'number') allNumbers = false;
  if (allNumbers && n > 0) {
    let nearInt = true;
    for (let i = 0; i < n; i++) {
      const v = labels[i] as number;
      if (Math.abs(v - Math.round(v)) > 1e-6) nearInt = false;
    }
    for (let i = 0; i < n; i++) {
      const v = labels[i] as number;
      // np.rint (half to even) never sees a half here: nearInt means within 1e-6 of an integer.
      out[i] = nearInt ? Math.round(v) : Math.trunc(v);
    }
    return out;
  }
  const strings = Array.from({ length: n }, (_, i) => String(labels[i]));
  let allInts = true;
  for (let i = 0; i < n && allInts; i++) {
    const v = pyInt(strings[i] as string);
    if (v === undefined) allInts = false;
    else out[i] = v;
  }
  if (allInts) return out;
  const uniq = [...new Set(strings)].sort(compareCodePoints);
  const rank = new Map(uniq.map((s, r) => [s, r] as const));
  for (let i = 0; i < n; i++) out[i] = rank.get(strings[i] as string) as number;
  return out;
}

/** Per-group mean, std and count as verl's `group_mean_std` returns them (float32 values). */
export interface GroupMeanStd {
  mean: Float32Array;
  std: Float32Array;
  count: Float32Array;
}

const f32 = Math.fround;

/**
 * verl's `verl/utils/groupwise.py::group_mean_std(scores, gidx, eps=1e-6)`, emulating its float32
 * arithmetic step by step (accumulation in row order, as CPU `index_add_`):
 *   count_g, s1_g = Σ s, s2_g = Σ s², mean = s1/count, var = (s2 − s1²/count)/max(count−1, 1),
 *   std = sqrt(max(var, eps)); groups with count ≤ 1 (including empty ids) get mean 0, std 1.
 * Returns arrays of length G = max(gidx)+1. The one-pass variance is what verl computes; it loses
 * precision for near-constant groups and is floored at eps (std ≥ sqrt(eps)).
 * Errors: length mismatch, negative or non-integer group ids (torch raises), non-finite scores.
 */
export function groupMeanStd(scores: ArrayLike<number>, gidx: ArrayLike<number>, eps = 1e-6): GroupMeanStd {
  if (scores.length !== gidx.length) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `gidx: expected ${scores.length} group ids (one per score), got ${gidx.length}`,
      { details: { field: 'gidx', expected: scores.length, actual: gidx.length } },
    );
  }
  if (!(eps >= 0) || !Number.isFinite(eps)) {
    throw new LabError('BAD_ARGUMENT', `eps: expected a finite number >= 0, got ${eps}`, {
      details: { field: 'eps' },
    });
  }
  let groups = 0;
  for (let i = 0; i < gidx.length; i++) {
    const g = gidx[i] as number;
    if (!Number.isInteger(g) || g < 0) {
      throw new LabError('BAD_VALUE', `gidx: group id ${g} at row ${i} is not a non-negative integer`, {
        details: { field: 'gidx', row: i },
      });
    }
    const s = scores[i] as number;
    if (!Number.isFinite(s)) {
      throw new LabError('NON_FINITE', `scores: value ${s} at row ${i} is not finite`, {
        details: { field: 'scores', row: i, value: s },
      });
    }
    if (g + 1 > groups) groups = g + 1;
  }
  const count = new Float32Array(groups);
  const s1 = new Float32Array(groups);
  const s2 = new Float32Array(groups);
  for (let i = 0; i < gidx.length; i++) {
    const g = gidx[i] as number;
    const s = f32(scores[i] as number);
    count[g] = (count[g] as number) + 1;
    s1[g] = (s1[g] as number) + s; // Float32Array store rounds each partial sum, as float32 index_add_
    s2[g] = (s2[g] as number) + f32(s * s);
  }
  const mean = new Float32Array(groups);
  const std = new Float32Array(groups);
  const epsF = f32(eps);
  for (let g = 0; g < groups; g++) {
    const c = count[g] as number;
    if (c <= 1) {
      mean[g] = 0;
      std[g] = 1;
      continue;
    }
    const a = s1[g] as number;
    mean[g] = a / c;
    const varNum = f32((s2[g] as number) - f32(f32(a * a) / c));
    const v = f32(varNum / Math.max(c - 1, 1));
    std[g] = Math.sqrt(Math.max(v, epsF));
  }
  return { mean, std, count };
}
