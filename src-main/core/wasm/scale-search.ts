/**
 * The host side of the WebAssembly scale-and-min search (assembly/scale-search.ts): one instance
 * per thread, made on first use, and views of its group (values, weights, levels, min). The
 * caller fills the views, runs `fitScaleAndMin` and reads the results back; the memory never
 * grows after the first use, so the views stay valid.
 */
import { WASM_BASE64 } from './scale-search.wasm';
import { growTo, instantiateBase64 } from './instantiate';

type Layout =
  | 'MAX_GROUP'
  | 'X_AT'
  | 'W_AT'
  | 'L_AT'
  | 'MIN_AT'
  | 'SCALES_AT'
  | 'MINS_AT'
  | 'SCQ_AT'
  | 'MQ_AT'
  | 'NIBBLES_AT'
  | 'Q3_BITS_AT'
  | 'END';
// Function properties: WebAssembly exports take no `this`, so they are handed on unbound.
type SearchExports = Record<Layout, WebAssembly.Global> & {
  memory: WebAssembly.Memory;
  fitScaleAndMin: (
    n: number,
    nmax: number,
    weighted: number,
    rmin: number,
    rdelta: number,
    nstep: number,
    useMad: number,
  ) => number;
  fitSubBlocksPlain: (nmax: number, rmin: number, rdelta: number, nstep: number) => void;
  fitScaleAndMinGroups: (
    count: number,
    n: number,
    nmax: number,
    rmin: number,
    rdelta: number,
    nstep: number,
    useMad: number,
  ) => void;
  fitSymmetricScale: (n: number, nmax: number, weighted: number) => number;
  fitSymmetricSubBlocks: (count: number, n: number, nmax: number, weighted: number) => void;
  fitSymmetricIterativeGroups: (count: number, n: number, nmax: number) => void;
  requantSubBlocks: (dAll: number, mAll: number, nmax: number) => void;
  packNibbles: () => void;
  finishQ3: () => void;
};

export interface ScaleSearch {
  /** The group's values and weights (inputs), levels and −min (outputs), MAX_GROUP long (min: 1). */
  x: Float32Array;
  w: Float32Array;
  levels: Uint8Array;
  min: Float32Array;
  /** A super-block's sub-block scales and −mins (16 each: outputs of the *SubBlocks searches). */
  scales: Float32Array;
  mins: Float32Array;
  /** Returns the scale; `weighted` 0: the weights are x² (written to `w`). */
  fitScaleAndMin: SearchExports['fitScaleAndMin'];
  /** quantize_row_q4_K_ref's sub-block searches over the 256 values in `x` (weights av_x + |x|). */
  fitSubBlocksPlain: SearchExports['fitSubBlocksPlain'];
  /** fitScaleAndMin over `count` groups of n values one after another in `x`, weights in `w` (count a multiple of 4, n ≤ 32): scales to `scales`, −mins to `mins`. */
  fitScaleAndMinGroups: SearchExports['fitScaleAndMinGroups'];
  /** Symmetric levels (level + nmax) of the n values in `x` (weights `w` when `weighted` is 1, else x²); returns the scale. */
  fitSymmetricScale: SearchExports['fitSymmetricScale'];
  /** fitSymmetricScale over `count` groups of n values, one after another in `x`: scales to `scales`. */
  fitSymmetricSubBlocks: SearchExports['fitSymmetricSubBlocks'];
  /** make_q3_quants over `count` groups of n values in `x` (count a multiple of 4, n ≤ 32): levels + nmax to `levels`, scales to `scales`. */
  fitSymmetricIterativeGroups: SearchExports['fitSymmetricIterativeGroups'];
  /** A Q4_K/Q5_K block's stored 6-bit sub-block scales and mins (8 each), read by requantSubBlocks. */
  scaleLevels: Uint8Array;
  minLevels: Uint8Array;
  /** The levels of the 256 values in `x` against the stored scales and mins (a scale of 0 keeps a sub-block's levels). */
  requantSubBlocks: SearchExports['requantSubBlocks'];
  /** Q4_K/Q5_K's qs (128 bytes, `nibbles`) from the low nibbles of the 256 levels in `levels`. */
  nibbles: Uint8Array;
  packNibbles: SearchExports['packNibbles'];
  /** Q3_K's requantization against the stored sub-block scales (`scales`: d per sub-block, 0 keeps its levels) and bit packing: hmask then qs (96 bytes, `q3Bits`). */
  finishQ3: SearchExports['finishQ3'];
  q3Bits: Uint8Array;
}

let search: ScaleSearch | undefined;

function instantiate(): ScaleSearch {
  const exports = instantiateBase64(WASM_BASE64).exports as unknown as SearchExports;
  const at = (name: Layout): number => exports[name].value as number;
  const memory = exports.memory;
  const end = at('END');
  growTo(memory, end);
  const n = at('MAX_GROUP');
  return {
    x: new Float32Array(memory.buffer, at('X_AT'), n),
    w: new Float32Array(memory.buffer, at('W_AT'), n),
    levels: new Uint8Array(memory.buffer, at('L_AT'), n),
    min: new Float32Array(memory.buffer, at('MIN_AT'), 1),
    scales: new Float32Array(memory.buffer, at('SCALES_AT'), 16),
    mins: new Float32Array(memory.buffer, at('MINS_AT'), 16),
    fitScaleAndMin: exports.fitScaleAndMin,
    fitSubBlocksPlain: exports.fitSubBlocksPlain,
    fitScaleAndMinGroups: exports.fitScaleAndMinGroups,
    fitSymmetricScale: exports.fitSymmetricScale,
    fitSymmetricSubBlocks: exports.fitSymmetricSubBlocks,
    fitSymmetricIterativeGroups: exports.fitSymmetricIterativeGroups,
    scaleLevels: new Uint8Array(memory.buffer, at('SCQ_AT'), 8),
    minLevels: new Uint8Array(memory.buffer, at('MQ_AT'), 8),
    requantSubBlocks: exports.requantSubBlocks,
    nibbles: new Uint8Array(memory.buffer, at('NIBBLES_AT'), 128),
    packNibbles: exports.packNibbles,
    finishQ3: exports.finishQ3,
    q3Bits: new Uint8Array(memory.buffer, at('Q3_BITS_AT'), 96),
  };
}

/** This thread's instance. */
export function scaleSearch(): ScaleSearch {
  return (search ??= instantiate());
}
