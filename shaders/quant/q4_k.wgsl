// Q4_K, as in the file, at the words the block layout gives: W_D = f16 d | f16 dmin << 16,
// scales[12] (from W_SCALES, see kscales.wgsl), qs[128] (from W_QS). Sub-block u (32 values, one unit) reads
// qs[32 (u / 2) + l]: low nibbles for even u, high for odd; value = d · scale · q - dmin · min.
#include "quant/kscales.wgsl"
const UNIT_PARTIAL = false;
const_assert {{W_QS}}u % 4u == 0u; // qs read 16 bytes at a time (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let b = {{BLOCK_WORDS}}u * (row * P.blocks_per_row + (u >> 3u));
  let head = kblock_head(b);
  let dm = f16x2(head[0]);
  let sm = kscale_min(vec3<u32>(head[1], head[2], head[3]), sub);
  let dl = dm.x * f32(sm.x);
  let ml = dm.y * f32(sm.y);
  let qs = b + {{W_QS}}u + 8u * (sub >> 1u);
  let shifts = vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(4u * (sub & 1u));
  // Constant indices, no loop: SwiftShader keeps w in registers.
  let a = w_quad(qs);
  let c = w_quad(qs + 4u);
  (*w)[0] = dl * nibbles4(a.x, shifts) - ml;
  (*w)[1] = dl * nibbles4(a.y, shifts) - ml;
  (*w)[2] = dl * nibbles4(a.z, shifts) - ml;
  (*w)[3] = dl * nibbles4(a.w, shifts) - ml;
  (*w)[4] = dl * nibbles4(c.x, shifts) - ml;
  (*w)[5] = dl * nibbles4(c.y, shifts) - ml;
  (*w)[6] = dl * nibbles4(c.z, shifts) - ml;
  (*w)[7] = dl * nibbles4(c.w, shifts) - ml;
}

// The nibbles of the four bytes of q at `shifts` (0 or 4 past each byte's start), as floats.
fn nibbles4(q: u32, shifts: vec4<u32>) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(q) >> shifts) & vec4<u32>(15u));
}
