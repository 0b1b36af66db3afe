// The assembled SIMD loss module, pinned byte for byte. The hashes were computed from the module as
// the spread-opcode emitter wrote it (main at 6bf44d6), before lossSimd.ts was rewritten in folded
// expressions: the rewrite is proven to produce the same bytes, not merely the same outputs on the
// batches lossSimd.test.ts generates. A deliberate change to the kernel updates these pins in the
// same commit, and says why in its message.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lossSimdModule } from './lossSimd.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The exported function names and their code-section bodies (locals and instructions), in order. */
function functionBodies(module: Uint8Array): Map<string, Uint8Array> {
  let pos = 8; // past magic and version
  const uleb = () => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = module[pos++] as number;
      value |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    return value >>> 0;
  };
  const names: string[] = [];
  const bodies: Uint8Array[] = [];
  while (pos < module.length) {
    const id = module[pos++] as number;
    const size = uleb();
    const end = pos + size;
    if (id === 7) {
      // export section: (name, kind, index)*; the module exports function i as the i-th export
      for (let n = uleb(); n > 0; n--) {
        const length = uleb();
        names.push(new TextDecoder().decode(module.subarray(pos, pos + length)));
        pos += length + 1;
        uleb();
      }
    }
    if (id === 10) {
      for (let n = uleb(); n > 0; n--) {
        const length = uleb();
        bodies.push(module.subarray(pos, pos + length));
        pos += length;
      }
    }
    pos = end;
  }
  return new Map(names.map((name, i) => [name, bodies[i] as Uint8Array]));
}

describe('lossSimd: the assembled module is pinned', () => {
  const module = lossSimdModule();

  it('the whole module has the pinned bytes', () => {
    expect(module.length).toBe(12265);
    expect(sha256(module)).toBe('fb337818704d3de578d0ac2cf5f2fe7dbd8f0132732e05944098ea863a091186');
  });

  it('each variant (aggregation mode × IS weights, and the agg row sums) has its pinned body', () => {
    // vanilla: token-mean; _pad: every other mode (padding values checked); _w: rollout IS weights
    const pins = Object.fromEntries(
      [...functionBodies(module)].map(([name, body]) => [name, `${body.length} ${sha256(body)}`]),
    );
    expect(pins).toEqual({
      vanilla: '2532 3ed28c52035792d78517c220785237ca7e8984e55f0cbce398af05e29c690856',
      vanilla_w: '2620 20e0fbfc347bdbe0301254b81d5521d53629c22547cb1fc242b8110e25e07816',
      vanilla_pad: '3020 aabebdeb84a201f33826bed6aac61cd1720f3c1614c75cd331468c4ec1b5b83d',
      vanilla_pad_w: '3252 d1f19c988dacbf3e708b8d22092568159322988b394d5b3d8ca65fb9d8aeb43e',
      agg: '631 db39c4a8c628d3ce0d4bdd86d61059590810f892d6792c56f5337cb83e4dd755',
    });
  });
});
