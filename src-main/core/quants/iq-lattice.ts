/**
 * The search structures llama.cpp's iq2xs_init_impl builds for the 8-value lattice types
 * (IQ2_XXS, IQ2_XS, IQ1_S), derived here from the same grids the decoders use (iq-tables.ts).
 *
 * A point of 8 values is a key of 8 levels, 2 bits each (value i at bits 2i..2i+1). Each grid
 * entry has levels 0..2 (its value's rank among the type's three grid values). The encoders round
 * each value to a level, look the key up, and when it is not a grid entry pick among its
 * neighbours: the grid entries at the `nwant` smallest squared level distances, ordered by
 * distance then grid index (ggml sorts them so before searching them in order, first best wins).
 * Neighbour lists are built on first use of a key.
 */

/** Keys with every level at most 2: the largest is 0b10 repeated 8 times. */
const KEY_COUNT = 0xaaaa + 1;
const WIDTH = 8;

export interface Lattice {
  /** levels[8g + i]: level (0..2) of value i of grid entry g. */
  readonly levels: Uint8Array;
  /** Grid index of a key, or -1 when the key is not on the grid. */
  readonly index: Int32Array;
  /** Grid entries nearest to an off-grid key, in the order ggml searches them. */
  neighbours(key: number): Uint16Array;
}

/**
 * The lattice of `grid` (entries of 8 values, each one of `values`, in increasing order, that
 * stand for levels 0, 1, 2), with neighbour lists spanning `nwant` distances.
 */
export function buildLattice(grid: Float32Array, values: readonly [number, number, number], nwant: number): Lattice {
  const entries = grid.length / WIDTH;
  const levels = new Uint8Array(grid.length);
  const index = new Int32Array(KEY_COUNT).fill(-1);
  for (let g = 0; g < entries; g++) {
    let key = 0;
    for (let i = 0; i < WIDTH; i++) {
      const l = values.indexOf(grid[g * WIDTH + i]!);
      if (l < 0) throw new Error(`iq-lattice: grid value ${grid[g * WIDTH + i]} is not one of ${values.join(', ')}`);
      levels[g * WIDTH + i] = l;
      key |= l << (2 * i);
    }
    index[key] = g;
  }
  const cache: (Uint16Array | undefined)[] = new Array(KEY_COUNT);
  const dist = new Uint8Array(entries);
  // Squared level distances are at most 8 · 2².
  const perDistance = new Int32Array(8 * 4 + 1);

  function neighbours(key: number): Uint16Array {
    const known = cache[key];
    if (known) return known;
    perDistance.fill(0);
    for (let g = 0; g < entries; g++) {
      let d2 = 0;
      for (let i = 0; i < WIDTH; i++) {
        const d = levels[g * WIDTH + i]! - ((key >> (2 * i)) & 3);
        d2 += d * d;
      }
      dist[g] = d2;
      perDistance[d2]!++;
    }
    let count = 0;
    let maxDistance = 0;
    for (let d2 = 0, have = 0; d2 < perDistance.length && have < nwant; d2++) {
      if (perDistance[d2] === 0) continue;
      count += perDistance[d2]!;
      maxDistance = d2;
      have++;
    }
    const list = new Uint16Array(count);
    let n = 0;
    for (let d2 = 0; d2 <= maxDistance; d2++) {
      if (perDistance[d2] === 0) continue;
      for (let g = 0; g < entries; g++) if (dist[g] === d2) list[n++] = g;
    }
    cache[key] = list;
    return list;
  }

  return { levels, index, neighbours };
}
