import { describe, expect, it } from 'vitest';
import { crc32c, maskedCrc32c } from './crc32c.js';

describe('crc32c', () => {
  it('matches the CRC-32C check value and RFC 3720 test vectors', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa); // 32 zero bytes (RFC 3720 B.4)
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
  });
  it('masks as TensorFlow does: rotate right 15, add 0xa282ead8', () => {
    const b = new TextEncoder().encode('123456789');
    const c = 0xe3069283;
    expect(maskedCrc32c(b)).toBe(((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0);
    expect(maskedCrc32c(b, 1, 4)).toBe(maskedCrc32c(b.slice(1, 4)));
  });
});
