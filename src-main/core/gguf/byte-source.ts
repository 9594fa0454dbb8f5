/**
 * Where GGUF bytes come from. The core never touches the file system: the node layer hands it a
 * memory-mapped file (zero-copy views) or, where mapping is impossible, positional reads.
 */
export interface ByteSource {
  /** Total bytes available. */
  readonly size: number;
  /**
   * How `bytes` is served: 'mmap' and 'memory' return views that share memory with the source;
   * 'read' copies through positional reads (the fallback, reported so callers know).
   */
  readonly access: 'mmap' | 'read' | 'memory';
  /** Bytes [offset, offset + length); the caller keeps the range inside `size`. */
  bytes(offset: number, length: number): Uint8Array;
}

/** A ByteSource over bytes already in memory (tests, fuzzing, generated files). */
export function memorySource(data: Uint8Array): ByteSource {
  return {
    size: data.byteLength,
    access: 'memory',
    bytes: (offset, length) => data.subarray(offset, offset + length),
  };
}
