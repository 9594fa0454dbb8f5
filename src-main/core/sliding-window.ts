/**
 * Which layers attend through a sliding window, as llama.cpp sets it up per architecture
 * (LLAMA_SWA_TYPE_STANDARD: a query at position p sees the keys at p − window + 1 ..= p). Read by
 * the engine, which masks those layers' attention, and by the model summary, which sizes their KV
 * cache as llama.cpp does.
 *
 * Each architecture's defaults are its entry's slidingWindow (core/architectures.ts). A
 * sliding_window_pattern given as an array is ignored, as llama.cpp does.
 */
import type { GgufFile } from './gguf/gguf-file';
import { architectureTraits, type SlidingWindowTraits } from './architectures';
import { readCount } from './gguf/metadata-counts';

export interface SlidingWindowLayout {
  window: number;
  /** Per layer, whether it is windowed (llama.cpp's set_swa_pattern). */
  layers: boolean[];
}

/**
 * Null for an architecture without windowed layers; throws an Error naming the key when the file's
 * window is unusable (a GgufError when a value is malformed). `nLayer`: the layer count as
 * readLayerCount checked it, since it sizes the answer.
 */
export function slidingWindowLayout(gguf: GgufFile, arch: string, nLayer: number): SlidingWindowLayout | null {
  const key = (name: string) => `${arch}.${name}`;
  const traits = architectureTraits(arch)?.slidingWindow;
  if (!traits) return null;
  const windowKey = key('attention.sliding_window');
  const size = windowSize(traits, readCount(gguf, windowKey), windowKey);
  if (size === null) return null;
  const patternKey = key('attention.sliding_window_pattern');
  const period = (gguf.getArray(patternKey) ? undefined : readCount(gguf, patternKey)) ?? traits.defaultPeriod;
  if (size <= 0) throw new Error(`${windowKey} is 0`);
  // set_swa_pattern: the last layer of each period attends to everything; period 0: every layer is windowed.
  const layers = Array.from({ length: nLayer }, (_, l) => period === 0 || l % period < period - 1);
  return { window: size, layers };
}

/** The window the file gives, else the architecture's default; null: no windowed layers. */
function windowSize(traits: SlidingWindowTraits, window: number | undefined, key: string): number | null {
  if (window === undefined) {
    if (traits.size === 'required') throw new Error(`${key} is missing`);
    return traits.size === 'optional' ? null : traits.size;
  }
  return window === 0 && traits.size === 'optional' ? null : window;
}
