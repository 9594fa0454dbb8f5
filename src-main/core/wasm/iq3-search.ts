/**
 * The host side of the WebAssembly IQ3 group search (assembly/iq3-search.ts): one instance per
 * lattice (IQ3_S's, IQ3_XXS's) per thread, its tables written once from the Lattice (iq-lattice.ts,
 * every off-grid key's neighbour list, as ggml's iq3xs_init_impl builds them), and views of its
 * group. The caller fills x, w and waux, runs `groupScale` and reads `levels`; the memory grows
 * only when the tables are written, before the views are made, so the views stay valid.
 */
import type { Lattice } from '../quants/iq-lattice';
import { WASM_BASE64 } from './iq3-search.wasm';
import { growTo, instantiateBase64 } from './instantiate';

type Layout =
  'X_AT' | 'W_AT' | 'WAUX_AT' | 'L_AT' | 'FAILED_AT' | 'KEYS' | 'INDEX_AT' | 'NB_START_AT' | 'NB_AT' | 'BLOCK_BYTES';
type SearchExports = Record<Layout, WebAssembly.Global> & {
  memory: WebAssembly.Memory;
  groupScale(max: number, steps: number, resnapAll: number): number;
};

export interface Iq3Search {
  /** The group's 32 magnitudes, weights and the weights' square roots (inputs). */
  x: Float32Array;
  w: Float32Array;
  waux: Float32Array;
  /** The 32 levels (0..7) groupScale chose, each 4 a grid entry. */
  levels: Uint8Array;
  /**
   * The scale of the group (largest magnitude `max`), trying `steps` scales either side of
   * max / 15; `resnapAll`: IQ3_S's re-snap of all 8 groups of 4 (else IQ3_XXS's, of those off the grid).
   */
  groupScale(max: number, steps: number, resnapAll: boolean): number;
}

/** An instance holding `lat`'s tables (a lattice of 4 values of 8 levels, keys of 3 bits per level). */
export function iq3Search(lat: Lattice): Iq3Search {
  const exports = instantiateBase64(WASM_BASE64).exports as unknown as SearchExports;
  const at = (name: Layout): number => exports[name].value as number;
  const keys = at('KEYS');
  if (lat.index.length > keys)
    throw new Error(`iq3-search: a lattice of ${lat.index.length} keys does not fit the module's ${keys}`);
  const lists: Uint16Array[] = [];
  let blocks = 0;
  for (let key = 0; key < keys; key++) {
    const list = key < lat.index.length && lat.index[key]! < 0 ? lat.neighbours(key) : new Uint16Array(0);
    lists.push(list);
    blocks += Math.ceil(list.length / 4);
  }
  const memory = exports.memory;
  const blockBytes = at('BLOCK_BYTES');
  growTo(memory, at('NB_AT') + blocks * blockBytes);
  const index = new Int16Array(memory.buffer, at('INDEX_AT'), keys);
  const starts = new Uint32Array(memory.buffer, at('NB_START_AT'), keys + 1);
  // Per block of 4 neighbours: 4 × f32x4 of odd level values (value i of neighbour j at 4i + j), then u32x4 of packed levels.
  const odd = new Float32Array(memory.buffer, at('NB_AT'), (blocks * blockBytes) / 4);
  const packed = new Uint32Array(memory.buffer, at('NB_AT'), (blocks * blockBytes) / 4);
  let block = 0;
  for (let key = 0; key < keys; key++) {
    index[key] = key < lat.index.length ? lat.index[key]! : -1;
    starts[key] = block;
    const list = lists[key]!;
    for (let j = 0; j < list.length; j += 4, block++) {
      const at = (block * blockBytes) / 4;
      for (let lane = 0; lane < 4; lane++) {
        // Pad with copies of the last neighbour: a later copy never wins (ties keep the first).
        const g = list[Math.min(j + lane, list.length - 1)]!;
        let word = 0;
        for (let i = 0; i < 4; i++) {
          const level = lat.levels[4 * g + i]!;
          odd[at + 4 * i + lane] = 2 * level + 1;
          word |= level << (8 * i);
        }
        packed[at + 16 + lane] = word >>> 0;
      }
    }
  }
  starts[keys] = block;
  const failed = new Uint8Array(memory.buffer, at('FAILED_AT'), 1);
  return {
    x: new Float32Array(memory.buffer, at('X_AT'), 32),
    w: new Float32Array(memory.buffer, at('W_AT'), 32),
    waux: new Float32Array(memory.buffer, at('WAUX_AT'), 32),
    levels: new Uint8Array(memory.buffer, at('L_AT'), 32),
    groupScale(max, steps, resnapAll) {
      const scale = exports.groupScale(max, steps, resnapAll ? 1 : 0);
      if (failed[0])
        throw new Error('IQ3 encoder: no grid neighbour has a finite error (non-finite values or weights)');
      return scale;
    },
  };
}
