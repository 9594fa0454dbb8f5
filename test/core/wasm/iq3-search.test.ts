/**
 * The WebAssembly IQ3 group search (assembly/iq3-search.ts): directly, on the choices its lane
 * layout could get wrong (equal errors: ggml keeps the first neighbour in its order, wherever it
 * sits among the 4-neighbour blocks; non-finite weights: a clear error), and through the
 * encoders on data that crowds the search (long neighbour lists, whole groups of 4 at zero
 * importance, huge and tiny groups, groups that snap alike at neighbouring scales), which must give
 * llama.cpp's bytes.
 */
import { describe, expect, it } from 'vitest';
import { buildLattice, type Lattice } from '../../../src-main/core/quants/iq-lattice';
import { IQ3S_GRID } from '../../../src-main/core/quants/iq-tables';
import { ggmlNearestInt } from '../../../src-main/core/quants/iq2-encoders';
import { iq3Search } from '../../../src-main/core/wasm/iq3-search';
import { expectLlamaBytes } from '../../support/encoder-check';
import { mulberry32 } from '../../support/random';

const fr = Math.fround;
const lattice = buildLattice(IQ3S_GRID.values, [1, 3, 5, 7, 9, 11, 13, 15], 3, 4, 3);

/** The key of values x[o..o + 4] rounded to levels 0..7 at inverse scale id, as ggml rounds them. */
function keyAt(x: Float32Array, o: number, id: number): number {
  let key = 0;
  for (let i = 0; i < 4; i++)
    key |= Math.min(7, Math.max(0, ggmlNearestInt(fr(0.5 * fr(fr(id * x[o + i]!) - 1))))) << (3 * i);
  return key;
}

/** The levels a key snaps to when every neighbour is equally near: the key itself on the grid, else its first neighbour. */
function firstChoice(lat: Lattice, key: number): number[] {
  const g = lat.index[key]! >= 0 ? lat.index[key]! : lat.neighbours(key)[0]!;
  return Array.from(lat.levels.subarray(4 * g, 4 * g + 4));
}

describe('WebAssembly IQ3 group search', () => {
  it('keeps the first of equally near neighbours, in ggml order, across its 4-neighbour blocks', () => {
    const search = iq3Search(lattice);
    const rng = mulberry32(5);
    let longLists = 0;
    for (let trial = 0; trial < 200; trial++) {
      for (let i = 0; i < 32; i++) search.x[i] = Math.abs(rng.gaussian()) + 0.05;
      // Weights for the scale fit; zero error weights make every neighbour's error 0, a tie.
      search.w.fill(1);
      search.waux.fill(0);
      search.levels.fill(0);
      const x = Float32Array.from(search.x);
      let max = 0;
      for (const v of x) max = Math.max(max, v);
      // One try (steps 0) at 15 / max, then the groups off the grid re-snapped at the fitted scale.
      const id0 = fr(15 / max);
      const levels = new Array<number>(32);
      const offGrid: number[] = [];
      for (let k = 0; k < 8; k++) {
        const key = keyAt(x, 4 * k, id0);
        if (lattice.index[key]! < 0) offGrid.push(k);
        levels.splice(4 * k, 4, ...firstChoice(lattice, key));
      }
      const fit = (): number => {
        let sx = 0;
        let s2 = 0;
        for (let i = 0; i < 32; i++) {
          const q = 2 * levels[i]! + 1;
          sx = fr(sx + fr(x[i]! * q));
          s2 = fr(s2 + fr(q * q));
        }
        return fr(sx / s2);
      };
      let scale = fit();
      if (offGrid.length > 0) {
        const id1 = fr(1 / scale);
        for (const k of offGrid) {
          const key = keyAt(x, 4 * k, id1);
          if (lattice.index[key]! < 0 && lattice.neighbours(key).length > 4) longLists++;
          levels.splice(4 * k, 4, ...firstChoice(lattice, key));
        }
        scale = fit();
      }
      expect(search.groupScale(max, 0, false), `trial ${trial}: scale`).toBe(scale);
      expect(Array.from(search.levels), `trial ${trial}: levels`).toEqual(levels);
    }
    // Ties among neighbours in later blocks were met, not just lists of one block.
    expect(longLists).toBeGreaterThan(50);
  });

  it('refuses non-finite weights with a clear error', () => {
    const search = iq3Search(lattice);
    for (let i = 0; i < 32; i++) search.x[i] = 1 + (i % 7) * 0.37;
    search.w.fill(1);
    search.waux.fill(NaN);
    expect(() => search.groupScale(3.22, 9, true)).toThrow(/no grid neighbour has a finite error/);
  });
});

describe('IQ3 encoders through the WebAssembly search: llama.cpp bytes on crowded groups', () => {
  const rowLength = 1024;
  const rows = 16;
  const rng = mulberry32(23);
  // Per group of 32: gaussian, two clusters (long neighbour lists), one spike, huge, tiny, near-constant.
  const data = new Float32Array(rows * rowLength);
  for (let at = 0; at < data.length; at += 32) {
    const kind = ((at / 32) * 5 + (at >> 10)) % 6;
    for (let i = 0; i < 32; i++) {
      const g = rng.gaussian();
      data[at + i] =
        kind === 0
          ? g
          : kind === 1
            ? (rng.next() < 0.5 ? -1 : 2.5) + 0.1 * g
            : kind === 2
              ? i === 7
                ? 30 * g
                : 0.2 * g
              : kind === 3
                ? 1e10 * g
                : kind === 4
                  ? 1e-6 * g
                  : 0.75 + 1e-3 * g;
    }
  }
  // Importance with whole groups of 4 at zero (every neighbour ties) beside heavy-tailed columns.
  const imatrix = Float32Array.from({ length: rowLength }, (_, i) =>
    (i >> 2) % 5 === 0 ? 0 : Math.exp(2 * rng.gaussian()),
  );
  for (const name of ['IQ3_S', 'IQ3_XXS']) {
    for (const weighted of [false, true]) {
      it(`${name}${weighted ? ' with an importance matrix' : ''}`, () => {
        expectLlamaBytes(name, data, rows, rowLength, weighted ? imatrix : null);
      });
    }
  }
});
