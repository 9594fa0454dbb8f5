// Rotary position embedding of single elements, included by kv-store.wgsl and attention-keys.wgsl:
// store_kv rotates K on its way into the cache and attention rotates Q as it loads it, so RoPE
// costs no dispatch.
//
// The angles come from a table computed on the CPU exactly as llama.cpp's rope cache (theta
// scale, freq base/scale, rope_freqs factors, YaRN ramp and magnitude):
// table[pos * nRot/2 + i] = (cos, sin) of pair i at position pos.
// Normal mode pairs dimensions (2i, 2i+1); NeoX mode pairs (i, i + nRot/2). Dimensions at and past
// nRot are not rotated.

struct RopePair {
  partner: u32,  // the other dimension of d's pair
  pair: u32,     // the pair's index i into the angle table
  first: bool,   // d is the pair's first dimension
}

// d < nRot, and nRot is even (hparams.ts): halves by a shift and a compare, because CPU drivers
// divide by a value not known at compile time lane by lane (8 divisions for lavapipe's 8 lanes).
fn rope_pair(d: u32, nRot: u32, neox: bool) -> RopePair {
  let half = nRot >> 1u;
  if (neox) {
    let first = d < half;
    return RopePair(select(d - half, d + half, first), select(d - half, d, first), first);
  }
  return RopePair(d ^ 1u, d >> 1u, (d & 1u) == 0u);
}

// Where pair i's (cos, sin) at position pos lies in the table.
fn rope_cell(pos: u32, nRot: u32, i: u32) -> u32 {
  return pos * (nRot >> 1u) + i;
}

// The rotated value of dimension d, given its value x, its partner's value and (cos, sin):
// (x0, x1) -> (x0·cos − x1·sin, x0·sin + x1·cos).
fn rope_rotate(x: f32, partner: f32, cs: vec2<f32>, first: bool) -> f32 {
  if (first) {
    return x * cs.x - partner * cs.y;
  }
  return partner * cs.y + x * cs.x;
}
