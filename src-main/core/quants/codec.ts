/**
 * The shape every block decoder has. One function per ggml type, chosen once per tensor (see
 * decoders.ts), then run over all its blocks: nothing is looked up per block.
 */
export type BlockDecoder = (
  /** Whole blocks, `blocks × typeSize` bytes, as stored in the file. */
  src: Uint8Array,
  /** Receives `blocks × blockSize` values. */
  dst: Float32Array,
  blocks: number,
) => void;
