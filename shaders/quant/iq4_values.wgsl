// The 16 non-linear values of IQ4_NL and IQ4_XS (kvalues_iq4nl in ggml-common.h).
const KVALUES_IQ4NL = array<f32, 16>(
  -127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);

fn iq4_values(q: vec4<u32>) -> vec4<f32> {
  return vec4<f32>(KVALUES_IQ4NL[q.x], KVALUES_IQ4NL[q.y], KVALUES_IQ4NL[q.z], KVALUES_IQ4NL[q.w]);
}
