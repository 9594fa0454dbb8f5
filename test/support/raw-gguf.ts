/**
 * A deliberately naive GGUF byte builder for tests: every field is written as given, offsets and
 * counts included, so tests can make files that are wrong in exactly one way. It shares no code
 * with the reader or writer under test.
 */
export class RawGguf {
  private parts: number[] = [];

  u8(v: number): this {
    this.parts.push(v & 0xff);
    return this;
  }
  u32(v: number): this {
    for (let i = 0; i < 4; i++) this.parts.push(Math.floor(v / 2 ** (8 * i)) & 0xff);
    return this;
  }
  u64(v: number | bigint): this {
    let b = BigInt(v);
    for (let i = 0; i < 8; i++, b >>= 8n) this.parts.push(Number(b & 0xffn));
    return this;
  }
  f32(v: number): this {
    const b = new Uint8Array(new Float32Array([v]).buffer);
    this.parts.push(...b);
    return this;
  }
  bytes(b: ArrayLike<number>): this {
    for (let i = 0; i < b.length; i++) this.parts.push(b[i]!);
    return this;
  }
  str(s: string, lengthBytes: 4 | 8 = 8): this {
    const b = new TextEncoder().encode(s);
    (lengthBytes === 4 ? this.u32(b.length) : this.u64(b.length)).bytes(b);
    return this;
  }
  /** GGUF header: magic, version, tensor count, kv count (u64 from v2 on). */
  header(tensors: number | bigint, kvs: number | bigint, version = 3): this {
    this.bytes([0x47, 0x47, 0x55, 0x46]).u32(version);
    return version === 1 ? this.u32(Number(tensors)).u32(Number(kvs)) : this.u64(tensors).u64(kvs);
  }
  kvU32(key: string, v: number): this {
    return this.str(key).u32(4).u32(v);
  }
  kvString(key: string, v: string): this {
    return this.str(key).u32(8).str(v);
  }
  tensor(name: string, ne: number[], type: number, offset: number | bigint): this {
    this.str(name).u32(ne.length);
    for (const n of ne) this.u64(n);
    return this.u32(type).u64(offset);
  }
  padTo(alignment: number): this {
    while (this.parts.length % alignment !== 0) this.parts.push(0);
    return this;
  }
  zeros(n: number): this {
    for (let i = 0; i < n; i++) this.parts.push(0);
    return this;
  }
  get length(): number {
    return this.parts.length;
  }
  build(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}
