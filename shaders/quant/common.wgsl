// Shared by every weight kernel (matmul, embedding): the per-dispatch parameters and the small
// helpers the block decoders use. The including kernel declares the bindings:
//   W: array<u32>   one part of a weight tensor (whole rows), as uploaded by weights.ts
//   W4: array<vec4<u32>>  with W_VEC4 only: the same buffer, 16 bytes at a time (w_quad)
//   P: WeightUniform uniform (declared in src-main/engine/gpu/kernel-uniforms.ts)
//
// A decoder (quant/<type>.wgsl) defines
//   fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>)
// giving values 32u .. 32u + 31 of `row` (row index within the part) as eight vec4s, and
//   const UNIT_PARTIAL: bool   true when a row may end inside a unit (plain float types), in
//                              which case values past the row's end come out as 0.

#struct WeightUniform

// IEEE half → f32, exactly as ggml_fp16_to_fp32 (subnormal halves included; unpack2x16float may
// flush them, so without SHADER_F16 the bits are decoded by hand). With SHADER_F16 the adapter
// converts, but WGSL lets it flush subnormal f16 to zero (a block's d or dmin among them): those
// (exponent bits 0) are taken as mantissa · 2^-24, exact in f32.
fn f16_to_f32(h: u32) -> f32 {
#if SHADER_F16
  let em = h & 0x7fffu;
  let sub = f32(em) * 5.9604644775390625e-8;
  return select(f32(bitcast<vec2<f16>>(h).x), select(sub, -sub, (h & 0x8000u) != 0u), em < 0x400u);
#else
  let sign = (h & 0x8000u) << 16u;
  let em = h & 0x7fffu;
  let mant = em & 0x3ffu;
  let normal = sign | ((em << 13u) + 0x38000000u);
  let special = sign | 0x7f800000u | (mant << 13u) | select(0u, 0x00400000u, mant != 0u);
  let v = bitcast<f32>(select(normal, special, em >= 0x7c00u));
  let sub = f32(em) * 5.9604644775390625e-8; // subnormal: mantissa · 2^-24, exact
  return select(v, select(sub, -sub, sign != 0u), em < 0x400u);
#endif
}

// Both halves of a word, low first. SHADER_F16 (the kernel enables f16): the adapter's own
// conversion, exact for every half (f32 holds them all, subnormal halves as normal floats), with
// subnormal halves taken by hand as in f16_to_f32, since the adapter may flush them.
fn f16x2(w: u32) -> vec2<f32> {
#if SHADER_F16
  let em = vec2<u32>(w & 0x7fffu, (w >> 16u) & 0x7fffu);
  let sub = vec2<f32>(em) * 5.9604644775390625e-8;
  let negative = vec2<bool>((w & 0x8000u) != 0u, (w & 0x80000000u) != 0u);
  return select(vec2<f32>(bitcast<vec2<f16>>(w)), select(sub, -sub, negative), em < vec2<u32>(0x400u));
#else
  return vec2<f32>(f16_to_f32(w & 0xffffu), f16_to_f32(w >> 16u));
#endif
}

fn bf16x2(w: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u));
}

// Words i .. i + 3 of W (i a multiple of 4): one 16-byte load where the kernel binds W4.
fn w_quad(i: u32) -> vec4<u32> {
#if W_VEC4
  return W4[i >> 2u];
#else
  return vec4<u32>(W[i], W[i + 1u], W[i + 2u], W[i + 3u]);
#endif
}

#if BLOCK_WORDS
// Where block `blk` of part row `row` lies in W: (the word of its first 16-byte quad, the words
// from one of its quads to the next). The one place that knows the layouts weights.ts uploads:
// rows as stored (quads side by side), or with ROW_LANES, the row groups of row-groups.ts (CPU
// adapters: for every block, row of a thread and quad, the ROW_LANES threads' quads side by side;
// the rows after the part's last full group as stored).
fn w_block(row: u32, blk: u32) -> vec2<u32> {
#if ROW_LANES
  const LANES = {{ROW_LANES}}u;
  const THREAD_ROWS = {{ROW_THREAD_ROWS}}u;
  const GROUP = LANES * THREAD_ROWS;
  const_assert {{BLOCK_WORDS}}u % 4u == 0u;
  if (row < P.part_rows - P.part_rows % GROUP) {
    let i = row % GROUP;
    let quad = (blk * THREAD_ROWS + i % THREAD_ROWS) * ({{BLOCK_WORDS}}u / 4u) * LANES + i / THREAD_ROWS;
    return vec2<u32>({{BLOCK_WORDS}}u * (row - i) * P.blocks_per_row + 4u * quad, 4u * LANES);
  }
#endif
  return vec2<u32>({{BLOCK_WORDS}}u * (row * P.blocks_per_row + blk), 4u);
}

// Word w of the block at h (w_block).
fn w_block_word(h: vec2<u32>, w: u32) -> u32 {
  return h.x + (w >> 2u) * h.y + (w & 3u);
}

// Words w .. w + 3 of the block at h (w a multiple of 4): one of its quads.
fn w_block_quad(h: vec2<u32>, w: u32) -> vec4<u32> {
  return w_quad(h.x + (w >> 2u) * h.y);
}
#endif

// Half number `i` (2 per word, little-endian) of W.
fn w_half(i: u32) -> u32 {
  return (W[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu;
}

// Byte number `i` of W.
fn w_byte(i: u32) -> u32 {
  return (W[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

// The four bytes of a word, as unsigned and as signed values.
fn bytes4(w: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xffu);
}
fn sbytes4(w: u32) -> vec4<i32> {
  return bitcast<vec4<i32>>(vec4<u32>(w) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u);
}

// Low and high nibbles of the four bytes of a word.
fn nib_lo(w: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u);
}
fn nib_hi(w: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> vec4<u32>(4u, 12u, 20u, 28u)) & vec4<u32>(15u);
}

// Bits s, s+1, s+2, s+3 of `bits`, one per lane.
fn bits4(bits: u32, s: u32) -> vec4<u32> {
  return (vec4<u32>(bits) >> (vec4<u32>(s) + vec4<u32>(0u, 1u, 2u, 3u))) & vec4<u32>(1u);
}

// Two-bit fields at shift `s` of the four bytes of a word.
fn crumbs4(w: u32, s: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(s))) & vec4<u32>(3u);
}
