/**
 * The search structures llama.cpp's iq2xs_init_impl / iq3xs_init_impl build for the lattice types
 * (8 values of 3 levels: IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S; 4 values of 8 levels: IQ3_S), derived
 * here from the same grids the decoders use (iq-tables.ts).
 *
 * A point of `width` values is a key of that many levels, `bits` bits each (value i at bits
 * bits·i..). Each grid entry has levels 0..n−1 (its value's rank among the type's n grid
 * values). The encoders round
 * each value to a level, look the key up, and when it is not a grid entry pick among its
 * neighbours: the grid entries at the `nwant` smallest squared level distances, ordered by
 * distance then grid index (ggml sorts them so before searching them in order, first best wins).
 * Neighbour lists are built on first use of a key.
 */

export interface Lattice {
  /** levels[width·g + i]: level of value i of grid entry g. */
  readonly levels: Uint8Array;
  /** Grid index of a key, or -1 when the key is not on the grid. */
  readonly index: Int32Array;
  /** Grid entries nearest to an off-grid key, in the order ggml searches them. */
  neighbours(key: number): Uint16Array;
}

/**
 * The lattice of `grid` (entries of `width` values, each one of `values`, in increasing order,
 * that stand for levels 0, 1, 2...), with neighbour lists spanning `nwant` distances.
 */
export function buildLattice(
  grid: Float32Array,
  values: readonly number[],
  nwant: number,
  width = 8,
  bits = 2,
): Lattice {
  const top = values.length - 1;
  // The largest key has every level at `top`.
  let keyCount = 1;
  for (let i = 0; i < width; i++) keyCount += top << (bits * i);
  const entries = grid.length / width;
  const levels = new Uint8Array(grid.length);
  const index = new Int32Array(keyCount).fill(-1);
  for (let g = 0; g < entries; g++) {
    let key = 0;
    for (let i = 0; i < width; i++) {
      const l = values.indexOf(grid[g * width + i]!);
      if (l < 0) throw new Error(`iq-lattice: grid value ${grid[g * width + i]} is not one of ${values.join(', ')}`);
      levels[g * width + i] = l;
      key |= l << (bits * i);
    }
    index[key] = g;
  }
  const cache = new Array<Uint16Array | undefined>(keyCount);
  const dist = new Uint8Array(entries);
  const perDistance = new Int32Array(width * top * top + 1);
  const mask = (1 << bits) - 1;

  function neighbours(key: number): Uint16Array {
    const known = cache[key];
    if (known) return known;
    perDistance.fill(0);
    for (let g = 0; g < entries; g++) {
      let d2 = 0;
      for (let i = 0; i < width; i++) {
        const d = levels[g * width + i]! - ((key >> (bits * i)) & mask);
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

/** What a grid search scores a candidate by: Σ w·x·q and Σ w·q², q = 2·level + 1. */
export interface OddLevelSums {
  sumqx: number;
  sumq2: number;
}

const sums: OddLevelSums = { sumqx: 0, sumq2: 0 };

/**
 * The odd-level sums (IQ2_XXS, IQ2_XS, IQ2_S; IQ3's are in assembly/iq3-search.ts) of the first n levels against weights and
 * values, in f32 and value order as ggml adds them. The result is reused by the next call.
 */
export function oddLevelSums(weight: Float32Array, xval: Float32Array, levels: Uint8Array, n: number): OddLevelSums {
  const fr = Math.fround;
  let sx = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const w = weight[i]!;
    const q = 2 * levels[i]! + 1;
    sx = fr(sx + fr(fr(w * xval[i]!) * q));
    s2 = fr(s2 + fr(fr(w * q) * q));
  }
  sums.sumqx = sx;
  sums.sumq2 = s2;
  return sums;
}
