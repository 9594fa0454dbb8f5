/**
 * The host side of the WebAssembly IQ4 scale search (assembly/iq4-search.ts): views of one
 * instance's sub-blocks. The caller writes up to `capacity` sub-blocks of 32 values and their
 * weights into x and w, runs `searchScales(count)` and reads `scales`. The memory grows once, before
 * the views are made, so they stay valid.
 */
import { WASM_BASE64 } from './iq4-search.wasm';
import { growTo, instantiateBase64 } from './instantiate';

type Layout = 'CAPACITY' | 'X_AT' | 'W_AT' | 'SCALE_AT' | 'END';
type SearchExports = Record<Layout, WebAssembly.Global> & {
  memory: WebAssembly.Memory;
  searchScales(count: number): void;
};

export interface Iq4Search {
  /** How many sub-blocks of 32 values x, w and scales hold. */
  capacity: number;
  /** Sub-block k's 32 values at 32k (input). */
  x: Float32Array;
  /** Their weights, at the same places (input). */
  w: Float32Array;
  /** Sub-block k's scale (0 for an all-zero one) after searchScales. */
  scales: Float32Array;
  /** ggml's IQ4 scale search on sub-blocks 0 .. count - 1. */
  searchScales(count: number): void;
}

export function iq4Search(): Iq4Search {
  const exports = instantiateBase64(WASM_BASE64).exports as unknown as SearchExports;
  const at = (name: Layout): number => exports[name].value as number;
  const capacity = at('CAPACITY');
  growTo(exports.memory, at('END'));
  const buffer = exports.memory.buffer;
  return {
    capacity,
    x: new Float32Array(buffer, at('X_AT'), 32 * capacity),
    w: new Float32Array(buffer, at('W_AT'), 32 * capacity),
    scales: new Float32Array(buffer, at('SCALE_AT'), capacity),
    searchScales(count) {
      if (!(count >= 0 && count <= capacity))
        throw new RangeError(`iq4-search: ${count} sub-blocks, the module holds 0..${capacity}`);
      exports.searchScales(count);
    },
  };
}
