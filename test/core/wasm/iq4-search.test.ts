/**
 * The WebAssembly IQ4 scale search (assembly/iq4-search.ts), which runs 4 sub-blocks side by side,
 * one per SIMD lane: directly, that a sub-block's scale never depends on the sub-blocks beside it
 * (all-zero, non-finite or huge ones included), and through the encoders on rows that mix, within
 * every quad, all-zero sub-blocks, values at the midpoints of IQ4_NL levels (ggml's tie rule), huge
 * and tiny ones, which must give llama.cpp's bytes with and without an importance matrix.
 */
import { describe, expect, it } from 'vitest';
import { encodeIQ4_NL } from '../../../src-main/core/quants/iq4-encoders';
import { IQ4NL_VALUES } from '../../../src-main/core/quants/iq-tables';
import { iq4Search } from '../../../src-main/core/wasm/iq4-search';
import { typeOf } from '../../support/decoder-check';
import { llamaQuantize } from '../../support/ggml-oracle';
import { expectLlamaBytes } from '../../support/encoder-check';
import { mulberry32, type Rng } from '../../support/random';

/** Midpoints of neighbouring IQ4_NL levels, and their negatives: where ggml's nearest-level rule breaks ties. */
const MIDPOINTS = Array.from({ length: 15 }, (_, i) => (IQ4NL_VALUES[i]! + IQ4NL_VALUES[i + 1]!) / 2).flatMap((m) => [
  m,
  -m,
]);

/** Sub-block kinds, chosen per slot so that every quad mixes them. */
const KINDS = 8;
function fillSub(out: Float32Array, at: number, kind: number, rng: Rng): void {
  for (let i = 0; i < 32; i++) {
    const g = rng.gaussian();
    out[at + i] =
      kind === 0
        ? 0
        : kind === 1
          ? g
          : // Largest magnitude ±127, so the first inverse scale is ±1 and the values sit on midpoints.
            kind === 2
            ? i === 0
              ? 127
              : MIDPOINTS[(i * 7) % MIDPOINTS.length]!
            : kind === 3
              ? i === 5
                ? -127
                : MIDPOINTS[(i * 11) % MIDPOINTS.length]!
              : kind === 4
                ? 1e30 * g
                : kind === 5
                  ? 1e-16 * g // below ggml's GROUP_MAX_EPS: all zero
                  : kind === 6
                    ? 1e-13 * g
                    : i % 5 === 0
                      ? 0
                      : 3 * g;
  }
}

describe('WebAssembly IQ4 scale search', () => {
  it('gives each sub-block the same scale whatever sits in the lanes beside it', () => {
    const search = iq4Search();
    const rng = mulberry32(41);
    const subs = Array.from({ length: 64 }, (_, k) => {
      const x = new Float32Array(32);
      fillSub(x, 0, k % KINDS, rng);
      const w = Float32Array.from(x, (v, i) => (i % 3 === 0 ? 0 : v * v + 0.5));
      return { x, w };
    });
    const alone = subs.map(({ x, w }) => {
      // The other lanes of the quad hold NaN and huge values: they must not leak in.
      search.x.fill(NaN, 0, 128).fill(3e38, 64, 128);
      search.w.fill(1, 0, 128);
      search.x.set(x);
      search.w.set(w);
      search.searchScales(1);
      return search.scales[0]!;
    });
    subs.forEach(({ x, w }, k) => {
      search.x.set(x, 32 * k);
      search.w.set(w, 32 * k);
    });
    search.searchScales(subs.length);
    expect(Array.from(search.scales.subarray(0, subs.length))).toEqual(alone);
    subs.forEach((_, k) => {
      if (k % KINDS === 0 || k % KINDS === 5) expect(alone[k], `sub-block ${k} is all zero`).toBe(0);
      else expect(alone[k], `sub-block ${k}`).not.toBe(0);
    });
  });

  it('refuses more sub-blocks than it holds', () => {
    const search = iq4Search();
    expect(() => search.searchScales(search.capacity + 1)).toThrow(/iq4-search: .* sub-blocks, the module holds 0\.\./);
  });
});

describe('IQ4 encoders through the WebAssembly search: llama.cpp bytes on mixed quads', () => {
  // Rows longer than the module holds (256 sub-blocks), so a row is searched in several calls.
  const rowLength = 9 * 1024;
  const rows = 3;
  const rng = mulberry32(7);
  const data = new Float32Array(rows * rowLength);
  for (let k = 0; k < data.length / 32; k++) fillSub(data, 32 * k, (k * 3 + (k >> 3)) % KINDS, rng);
  // Importance with zero columns beside heavy-tailed ones.
  const imatrix = Float32Array.from({ length: rowLength }, (_, i) => (i % 9 === 0 ? 0 : Math.exp(2 * rng.gaussian())));
  for (const name of ['IQ4_NL', 'IQ4_XS']) {
    for (const weighted of [false, true]) {
      it(`${name}${weighted ? ' with an importance matrix' : ''}`, () => {
        expectLlamaBytes(name, data, rows, rowLength, weighted ? imatrix : null);
      });
    }
  }

  it('IQ4_NL on a row of 5 sub-blocks (a partial quad)', () => {
    const type = typeOf('IQ4_NL');
    const row = data.subarray(0, 160);
    const ours = new Uint8Array(5 * type.typeSize);
    encodeIQ4_NL(row, ours, 1, 160, null);
    expect(Buffer.compare(Buffer.from(ours), Buffer.from(llamaQuantize(type.id, row, 1, 160)))).toBe(0);
  });
});
