/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) and TFRecord's masked form, as TensorBoard's
 * record writer uses them (tensorboard/summary/writer/record_writer.py → `masked_crc32c` in
 * tensorboard/compat/tensorflow_stub/pywrap_tensorflow.py: `((crc >> 15) | (crc << 17)) + 0xa282ead8`,
 * 32-bit).
 */

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32C of `bytes[start, end)`; check value crc32c("123456789") = 0xE3069283. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = (TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC: rotate right by 15 bits, add 0xa282ead8 (mod 2^32). */
export function maskedCrc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const c = crc32c(bytes, start, end);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
