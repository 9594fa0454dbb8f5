import type { ByteSource } from './byte-source';
import { GgufError } from './errors';

/** Bytes fetched from the source at a time while walking the header. */
const CHUNK_BYTES = 1 << 20;

/**
 * A little-endian read cursor over a ByteSource. It pulls the header through in chunks, so a
 * positional-read source costs a few large reads, and it turns every read past the end of the
 * file into a GgufError that names the field being read.
 */
export class Cursor {
  pos = 0;
  private chunk: Uint8Array = new Uint8Array(0);
  private chunkStart = 0;
  private view = new DataView(this.chunk.buffer);

  constructor(
    private readonly source: ByteSource,
    readonly file: string,
  ) {}

  get size(): number {
    return this.source.size;
  }

  get remaining(): number {
    return this.source.size - this.pos;
  }

  fail(field: string, problem: string): never {
    throw new GgufError(this.file, field, problem);
  }

  /**
   * Makes `n` bytes at `pos` readable through `view` and returns their index in the chunk.
   * Call it before touching `view`: it may replace the chunk.
   */
  private need(n: number, field: string): number {
    if (n > this.remaining) {
      this.fail(field, `file is truncated: needs ${n} bytes at offset ${this.pos}, only ${this.remaining} left`);
    }
    let at = this.pos - this.chunkStart;
    if (at < 0 || at + n > this.chunk.byteLength) {
      const length = Math.min(Math.max(CHUNK_BYTES, n), this.remaining);
      this.chunk = this.source.bytes(this.pos, length);
      this.view = new DataView(this.chunk.buffer, this.chunk.byteOffset, this.chunk.byteLength);
      this.chunkStart = this.pos;
      at = 0;
    }
    this.pos += n;
    return at;
  }

  u8(field: string): number {
    const at = this.need(1, field);
    return this.view.getUint8(at);
  }
  i8(field: string): number {
    const at = this.need(1, field);
    return this.view.getInt8(at);
  }
  u16(field: string): number {
    const at = this.need(2, field);
    return this.view.getUint16(at, true);
  }
  i16(field: string): number {
    const at = this.need(2, field);
    return this.view.getInt16(at, true);
  }
  u32(field: string): number {
    const at = this.need(4, field);
    return this.view.getUint32(at, true);
  }
  i32(field: string): number {
    const at = this.need(4, field);
    return this.view.getInt32(at, true);
  }
  f32(field: string): number {
    const at = this.need(4, field);
    return this.view.getFloat32(at, true);
  }
  f64(field: string): number {
    const at = this.need(8, field);
    return this.view.getFloat64(at, true);
  }
  u64(field: string): bigint {
    const at = this.need(8, field);
    return this.view.getBigUint64(at, true);
  }
  i64(field: string): bigint {
    const at = this.need(8, field);
    return this.view.getBigInt64(at, true);
  }

  /** A u64 that must fit in a JS number exactly (counts, offsets, dimensions). */
  u64Number(field: string): number {
    const at = this.need(8, field);
    const lo = this.view.getUint32(at, true);
    const hi = this.view.getUint32(at + 4, true);
    // Two u32 halves instead of a BigInt: this runs once per vocabulary string.
    if (hi > 0x1fffff) this.fail(field, `value ${(BigInt(hi) << 32n) | BigInt(lo)} is too large`);
    return hi * 2 ** 32 + lo;
  }

  /** `n` bytes as a view into the current chunk (valid until the next read). */
  take(n: number, field: string): Uint8Array {
    const at = this.need(n, field);
    return this.chunk.subarray(at, at + n);
  }

  skip(n: number, field: string): void {
    if (n > this.remaining) {
      this.fail(field, `file is truncated: needs ${n} bytes at offset ${this.pos}, only ${this.remaining} left`);
    }
    this.pos += n;
  }

  /** Bytes [start, pos) straight from the source: a zero-copy view when the source is mapped. */
  since(start: number): Uint8Array {
    return this.source.bytes(start, this.pos - start);
  }
}
