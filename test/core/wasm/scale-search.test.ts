/**
 * The WebAssembly scale searches (assembly/scale-search.ts) through the encoders that use them,
 * on groups that stress their shortcuts. Scale and min: both group sizes (16 values: Q2_K, 32:
 * Q4_K, Q5_K, Q4_1), both error measures (Q2_K's absolute error), groups where many tries win (the
 * offset moves, so the try levels restart from fresh values). Symmetric: Q6_K (16 values), Q3_K
 * and Q4_0 with importance weights (16 and 32); Q3_K's iterative search without them. The K-quant
 * sub-block searches run four groups per call side by side (lanes), so groups ggml skips or finds
 * flat sit beside ordinary ones too. With and without importance weights; every block must be
 * llama.cpp's, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { scaleSearch } from '../../../src-main/core/wasm/scale-search';
import { expectLlamaBytes } from '../../support/encoder-check';
import { mulberry32 } from '../../support/random';

describe("the scale search's memory layout (assembly/scale-search.ts, computed from region sizes)", () => {
  it('gives the host regions that do not overlap and lie inside the memory', () => {
    const s = scaleSearch();
    const views = {
      x: s.x,
      w: s.w,
      levels: s.levels,
      min: s.min,
      scales: s.scales,
      mins: s.mins,
      scaleLevels: s.scaleLevels,
      minLevels: s.minLevels,
      nibbles: s.nibbles,
      q3Bits: s.q3Bits,
    };
    const regions = Object.entries(views)
      .map(([name, v]) => ({ name, start: v.byteOffset, end: v.byteOffset + v.byteLength }))
      .sort((a, b) => a.start - b.start);
    for (let i = 1; i < regions.length; i++)
      expect(regions[i]!.start, `${regions[i - 1]!.name} runs into ${regions[i]!.name}`).toBeGreaterThanOrEqual(
        regions[i - 1]!.end,
      );
    expect(regions.at(-1)!.end).toBeLessThanOrEqual(s.x.buffer.byteLength);
    // Above the data segment and stack, and v128-aligned.
    for (const r of regions) expect(r.start % 16, r.name).toBe(0);
    expect(regions[0]!.start).toBe(0x10000);
  });
});

const rowLength = 1024;
const rows = 24;

/** Rows of several shapes: gaussian, skewed (mostly positive), a few outliers, two clusters. */
function groups(): Float32Array {
  const rng = mulberry32(41);
  const data = new Float32Array(rows * rowLength);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < rowLength; i++) {
      const g = rng.gaussian();
      const kind = r % 4;
      data[r * rowLength + i] =
        kind === 0
          ? g * 0.02
          : kind === 1
            ? Math.abs(g) * 0.5 + 0.1 * rng.gaussian()
            : kind === 2
              ? rng.next() < 0.03
                ? g * 40
                : g
              : (rng.next() < 0.5 ? -1 : 3) + 0.05 * g;
    }
  }
  return data;
}

describe('WebAssembly scale searches', () => {
  const data = groups();
  const rng = mulberry32(9);
  const imatrix = Float32Array.from({ length: rowLength }, () => Math.exp(2 * rng.gaussian()));
  for (const name of ['Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K', 'Q4_1', 'Q4_0']) {
    for (const weighted of [false, true]) {
      it(`${name}${weighted ? ' with an importance matrix' : ''}: llama.cpp's bytes`, () => {
        expectLlamaBytes(name, data, rows, rowLength, weighted ? imatrix : null);
      });
    }
  }

  // The sub-block searches run four groups side by side, lane by lane: groups that ggml skips
  // (all zero, below GROUP_MAX_EPS) or whose values are all equal (no spread) sit beside ordinary
  // ones in the same four, in every position.
  const mixed = (() => {
    const rng = mulberry32(77);
    const out = new Float32Array(rows * rowLength);
    for (let at = 0; at < out.length; at += 16) {
      const kind = ((at / 16) * 7 + (at >> 10)) % 6;
      for (let i = 0; i < 16; i++) {
        out[at + i] =
          kind === 0
            ? 0
            : kind === 1
              ? 1e-17 * rng.gaussian()
              : kind === 2
                ? 0.5
                : kind === 3
                  ? -0.3
                  : kind === 4
                    ? rng.gaussian()
                    : Math.abs(rng.gaussian());
      }
    }
    return out;
  })();
  for (const name of ['Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K']) {
    for (const weighted of [false, true]) {
      it(`${name}${weighted ? ' with an importance matrix' : ''}: skipped and flat groups beside ordinary ones, llama.cpp's bytes`, () => {
        expectLlamaBytes(name, mixed, rows, rowLength, weighted ? imatrix : null);
      });
    }
  }

  it('holds groups of up to 256 values in its memory', () => {
    const search = scaleSearch();
    expect(search.x.length).toBe(256);
    expect(search.levels.length).toBe(256);
  });
});
