/**
 * Timing a whole child process (the built CLI, `node -e ""`): wall time, and the CPU time (user +
 * system) the child used, read from this process's cumulative children's times in /proc/self/stat
 * (Linux; clock ticks of 10 ms). On a shared, loaded machine wall time includes waiting for a core;
 * CPU time does not, so both are reported.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Cumulative user + system CPU ms of this process's waited-for children, or NaN off Linux. */
function childrenCpuMs(): number {
  if (!existsSync('/proc/self/stat')) return Number.NaN;
  // Fields after the ')' that closes the command name: state is field 3; cutime, cstime are 16, 17.
  const text = readFileSync('/proc/self/stat', 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10; // USER_HZ is 100 on Linux
}

export interface ChildTiming {
  wallMs: number;
  cpuMs: number;
}

/**
 * Runs `node ...args` to completion (stdout discarded; `env` added to this process's environment);
 * throws if it exits non-zero. `stderr` is what the child wrote there.
 */
export function timeNode(
  args: readonly string[],
  env: Record<string, string> = {},
): ChildTiming & { stderr: string } {
  const cpu0 = childrenCpuMs();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  const wallMs = performance.now() - t0;
  const cpuMs = childrenCpuMs() - cpu0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { wallMs, cpuMs, stderr: r.stderr };
}

/**
 * Runs `node ...args` for every entry of `argsList` at the same time and waits for all: the wall time
 * until the last one exits, and the CPU time all of them used. Throws if any exits non-zero.
 */
export async function timeNodesTogether(argsList: readonly (readonly string[])[]): Promise<ChildTiming> {
  const cpu0 = childrenCpuMs();
  const t0 = performance.now();
  await Promise.all(
    argsList.map(
      (args) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (d) => {
            stderr += d;
          });
          child.on('error', reject);
          child.on('close', (code) =>
            code === 0 ? resolve() : reject(new Error(`node ${args.join(' ')} exited ${code}: ${stderr}`)),
          );
        }),
    ),
  );
  const wallMs = performance.now() - t0;
  return { wallMs, cpuMs: childrenCpuMs() - cpu0 };
}

/** The built CLI (`npm run build` first) in `dist` (default: LABS_BENCH_DIST, else dist/). */
export function builtCli(dist = process.env.LABS_BENCH_DIST ?? 'dist'): string {
  const cli = join(dist, 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error(`${cli} not found: run npm run build first`);
  return cli;
}

/** One-minute load average (what else the shared machine was doing), for the bench notes. */
export function loadAverage(): string {
  return existsSync('/proc/loadavg') ? (readFileSync('/proc/loadavg', 'utf8').split(' ')[0] ?? '?') : '?';
}
