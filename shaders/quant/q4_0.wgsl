// Q4_0, repacked (weights.ts): main plane qs[16] per block (4 words); scale plane f16 d per block.
// Byte j of qs: low nibble is value j, high nibble value j + 16; value = (nibble - 8) · d.
#include "quant/nibbles.wgsl"

fn nibble_values(q: vec4<u32>, d: f32) -> vec4<f32> {
  return (vec4<f32>(q) - 8.0) * d;
}
