// IQ4_NL, repacked (weights.ts): main plane qs[16] per block (4 words); scale plane f16 d per block.
// Byte j of qs: low nibble indexes value j, high nibble value j + 16; value = d · KVALUES_IQ4NL[nibble].
#include "quant/iq4_values.wgsl"
#include "quant/nibbles.wgsl"

fn nibble_values(q: vec4<u32>, d: f32) -> vec4<f32> {
  return d * iq4_values(q);
}
