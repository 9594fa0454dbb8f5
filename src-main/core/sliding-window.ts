/**
 * Which layers attend through a sliding window, as llama.cpp sets it up per architecture
 * (LLAMA_SWA_TYPE_STANDARD: a query at position p sees the keys at p − window + 1 ..= p). Read by
 * the engine, which masks those layers' attention, and by the model summary, which sizes their KV
 * cache as llama.cpp does.
 *
 * gemma2: always, window 4096 and every other layer by default; gemma3: only when the file has a
 * sliding_window, 5 of every 6 layers by default; gpt-oss: always, the window required, every other
 * layer by default. phi3's window is disabled in llama.cpp, so here too. A sliding_window_pattern
 * given as an array is ignored, as llama.cpp does.
 */
import type { GgufFile } from './gguf/gguf-file';
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
  const defaultPeriod = { gemma2: 2, 'gpt-oss': 2, gemma3: 6 }[arch];
  if (defaultPeriod === undefined) return null;
  const window = readCount(gguf, key('attention.sliding_window'));
  if (arch === 'gemma3' && !(window !== undefined && window > 0)) return null;
  if (arch === 'gpt-oss' && window === undefined) throw new Error(`${key('attention.sliding_window')} is missing`);
  const patternKey = key('attention.sliding_window_pattern');
  const period = (gguf.getArray(patternKey) ? undefined : readCount(gguf, patternKey)) ?? defaultPeriod;
  const size = window ?? 4096;
  if (size <= 0) throw new Error(`${key('attention.sliding_window')} is 0`);
  // set_swa_pattern: the last layer of each period attends to everything; period 0: every layer is windowed.
  const layers = Array.from({ length: nLayer }, (_, l) => period === 0 || l % period < period - 1);
  return { window: size, layers };
}
