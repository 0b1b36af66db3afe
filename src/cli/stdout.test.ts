// output.write through a real pipe: everything arrives, in order, even when it is far larger than
// the pipe's buffer (the reader is slower than the writer).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('output.write', () => {
  it('delivers 3 MB written in pieces through a pipe, complete and in order', async () => {
    const script = `import('./src/cli/stdout.ts').then(({ output }) => {
      for (let i = 0; i < 300; i++) output.write(String(i % 10).repeat(10000));
      output.write('\\nend\\n');
    })`;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    // read slowly, so the writer fills the pipe and must wait
    child.stdout.on('data', (d: Buffer) => {
      chunks.push(d);
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 1);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const text = Buffer.concat(chunks).toString('utf8');
    expect(code).toBe(0);
    expect(text.length).toBe(300 * 10000 + 5);
    for (let i = 0; i < 300; i += 37)
      expect(text.slice(i * 10000, i * 10000 + 3)).toBe(String(i % 10).repeat(3));
    expect(text.endsWith('\nend\n')).toBe(true);
  }, 30_000);
});
