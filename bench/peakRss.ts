/**
 * This process's own peak resident set size, in MB. On Linux it is `VmHWM` from /proc/self/status:
 * the high-water mark of the address space `exec` gave this process. `process.resourceUsage().maxRSS`
 * (getrusage) is not that for a child the bench spawns: Linux carries the parent's high-water mark
 * across fork and exec into it, so a child of a bench that had just held the 1M-row audit data
 * reported 677 MB where its own peak was 117 MB. Elsewhere (no /proc) it falls back to maxRSS and
 * says so in `source`.
 */
import { readFileSync } from 'node:fs';

export function ownPeakRssMb(): { mb: number; source: 'VmHWM' | 'maxRSS' } {
  try {
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb) return { mb: Number(kb) / 1024, source: 'VmHWM' };
  } catch {
    // not Linux: fall through
  }
  return { mb: process.resourceUsage().maxRSS / 1024, source: 'maxRSS' };
}
