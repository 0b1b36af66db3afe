/**
 * What a fresh memory page costs on this machine: filling a new 64 MiB Float32Array (each call
 * allocates it, so every page is faulted in and zeroed by the kernel on first touch) against filling
 * one preallocated buffer of the same size (the floor: the same writes, no new pages). This is the
 * cost every allocating kernel pays for its output, and the reason they all accept `out`; it also
 * weighs on start-up (docs/bench-startup.md). The ratio is the machine's, not the library's: on these
 * VMs a first-touched page has cost ~12 us, several times a bare-metal fault.
 */
import type { BenchRow } from './run.js';
import { timeMedian } from './timing.js';

const BYTES = 64 * 1024 * 1024;
const PAGE = 4096;

export async function run(): Promise<BenchRow[]> {
  const n = BYTES / Float32Array.BYTES_PER_ELEMENT;
  const reused = new Float32Array(n);
  let sink = 0;
  const reuse = timeMedian(() => {
    reused.fill(1.5);
    sink += reused[n - 1] as number;
  });
  const fresh = timeMedian(() => {
    const a = new Float32Array(n);
    a.fill(1.5);
    sink += a[n - 1] as number;
  });
  if (!Number.isFinite(sink)) throw new Error('unreachable: keeps the fills from being dropped');
  const perPageUs = ((fresh - reuse) * 1000) / (BYTES / PAGE);
  return [
    {
      group: 'memory',
      name: 'fill a fresh 64 MiB Float32Array vs a reused one',
      ms: fresh,
      floor_ms: reuse,
      ratio: fresh / reuse,
      note: `~${perPageUs.toFixed(1)} us per fresh 4 KiB page beyond the fill itself; median of 7 after 2 warm-ups`,
    },
  ];
}
