import { afterEach, describe, expect, it, vi } from 'vitest';
import { output } from '../stdout.js';
import { listCommand } from './list.js';

async function captureList(json: boolean): Promise<string> {
  let out = '';
  const spy = vi.spyOn(output, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    expect(await listCommand({ command: 'list', json, debug: false })).toBe(0);
  } finally {
    spy.mockRestore();
  }
  return out;
}

afterEach(() => vi.restoreAllMocks());

describe('labs list', () => {
  it('shows the accepted range or choices of every bounded option beside its meaning', async () => {
    const text = await captureList(false);
    const line = (exp: string, key: string) => {
      const block = text.split('\n\n').find((b) => b.startsWith(exp)) ?? '';
      return block.split('\n').find((l) => l.includes(`--set ${key}=`)) ?? '';
    };
    expect(line('truncation', 'budget')).toMatch(/\[integer in \[4, 1000\]\]$/);
    expect(line('agent', 'lr')).toMatch(/\[number > 0\]$/);
    expect(line('agent', 'std')).toMatch(/\[one of population\|unbiased\|none\]$/);
  });

  it('--json gives each option an `accepts` phrase next to its default and help', async () => {
    const data = JSON.parse(await captureList(true)) as {
      name: string;
      options: Record<string, { default: unknown; help: string; unit: string; accepts: string }>;
    }[];
    const mask = data.find((e) => e.name === 'mask');
    expect(mask?.options.group_size).toMatchObject({ default: 8, accepts: 'integer in [1, 256]' });
    expect(mask?.options.optimizer?.accepts).toBe('one of adam|sgd');
    expect(mask?.options.budget).toMatchObject({ default: 48, unit: 'tokens' });
    // truncation shares the token-lab option block with a different default only
    const truncation = data.find((e) => e.name === 'truncation');
    expect(truncation?.options.budget).toMatchObject({
      default: 25,
      unit: 'tokens',
      accepts: 'integer in [4, 1000]',
    });
    expect(Object.keys(mask?.options ?? {})).not.toContain('overlong_buffer');
  });
});
