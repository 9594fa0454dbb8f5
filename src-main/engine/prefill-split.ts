/**
 * How a prefill chunk is cut into submissions on a GPU: by groups of layers, so that no single
 * submission runs past about a second on a slow GPU (Windows resets a GPU whose job runs 2 s,
 * TDR). A chunk keeps its tokens (the mat-mat kernels' tiles stay full); only its layers split.
 *
 * The work of a layer for `tokens` tokens at positions up to `end`: 2 FLOP per weight per token
 * (the matrices, routed experts at used/experts) and attention's 4 per (query, key, dimension)
 * (Q·K and P·V over the keys so far).
 */

/**
 * FLOP/s of a slow GPU, taken as the floor: an integrated GPU such as Intel UHD 620 peaks at about
 * 0.4 TFLOP/s (24 EUs × 16 FLOP per clock × 1.1 GHz), and a kernel decoding quantized blocks reaches
 * a fraction of that; 1e11 is a quarter of its peak.
 */
export const SLOW_GPU_FLOPS = 1e11;
/** Seconds one submission may run on SLOW_GPU_FLOPS: half of Windows' 2 s. */
export const SUBMIT_SECONDS = 1;
/** FLOPs of one submission on a GPU. */
export const SUBMIT_FLOPS = SLOW_GPU_FLOPS * SUBMIT_SECONDS;

export interface LayerWork {
  /** Layers of the model. */
  nLayer: number;
  /** Weights of one layer's matrices that one token multiplies (routed experts at used/experts). */
  layerWeights: number;
  /** Query heads × head size (attention's width). */
  attentionWidth: number;
}

/** Layers [from, to) of one submission. */
export interface LayerGroup {
  from: number;
  to: number;
}

/** FLOPs of one layer for `tokens` tokens whose last position is end − 1. */
export function layerFlops(work: LayerWork, tokens: number, end: number): number {
  return tokens * (2 * work.layerWeights + 4 * end * work.attentionWidth);
}

/**
 * The layer groups of a chunk of `tokens` tokens from position `pos`: as many layers each as fit
 * `budget` FLOPs (at least one), all layers in one group when they fit.
 */
export function prefillLayerGroups(work: LayerWork, pos: number, tokens: number, budget = SUBMIT_FLOPS): LayerGroup[] {
  const perGroup = Math.max(1, Math.floor(budget / layerFlops(work, tokens, pos + tokens)));
  const groups: LayerGroup[] = [];
  for (let from = 0; from < work.nLayer; from += perGroup)
    groups.push({ from, to: Math.min(work.nLayer, from + perGroup) });
  return groups;
}
