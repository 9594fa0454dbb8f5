// Q4_K/Q5_K: the 6-bit scale and min of sub-block j (0..7) from scales[12] (words W_SCALES ..
// W_SCALES + 2 of the block): for j < 4 the low 6 bits of bytes j (scale) and j + 4 (min); for
// j >= 4 the nibbles of byte j + 4 (low: scale, high: min) plus the top 2 bits of bytes j - 4
// (scale) and j (min).
fn kscale_byte(s: vec3<u32>, i: u32) -> u32 {
  return (s[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

// (scale, min) of sub-block j, from the three scale words.
fn kscale_min(s: vec3<u32>, j: u32) -> vec2<u32> {
  if (j < 4u) {
    return vec2<u32>(kscale_byte(s, j) & 63u, kscale_byte(s, j + 4u) & 63u);
  }
  let c = kscale_byte(s, j + 4u);
  return vec2<u32>((c & 15u) | ((kscale_byte(s, j - 4u) >> 6u) << 4u), (c >> 4u) | ((kscale_byte(s, j) >> 6u) << 4u));
}

// The scales and mins of all 8 sub-blocks at once (the layout above, four lanes at a time), as
// floats: scale[j] = sc[j / 4][j % 4], min[j] = mn[j / 4][j % 4].
struct KScales {
  sc: array<vec4<f32>, 2>,
  mn: array<vec4<f32>, 2>,
}

fn kscales_all(s: vec3<u32>) -> KScales {
  let lo = bytes4(s[0]);
  let mid = bytes4(s[1]);
  let hi = bytes4(s[2]);
  let six = vec4<u32>(63u);
  let top = vec4<u32>(6u);
  let four = vec4<u32>(4u);
  return KScales(
    array<vec4<f32>, 2>(vec4<f32>(lo & six), vec4<f32>((hi & vec4<u32>(15u)) | ((lo >> top) << four))),
    array<vec4<f32>, 2>(vec4<f32>(mid & six), vec4<f32>((hi >> four) | ((mid >> top) << four))),
  );
}

// The words W_D and W_SCALES .. W_SCALES + 2 of the block at h (w_block): its first quad, one
// 16-byte load where the kernel has W4.
fn kblock_head(h: vec2<u32>) -> array<u32, 4> {
  const_assert {{W_D}}u < 4u && {{W_SCALES}}u + 2u < 4u;
  let q = w_block_quad(h, 0u);
  return array<u32, 4>(q[{{W_D}}u], q[{{W_SCALES}}u], q[{{W_SCALES}}u + 1u], q[{{W_SCALES}}u + 2u]);
}

// Sub-blocks sub and sub + 1 of the block at h (w_block): d and dmin, and the (scale, min) of each.
struct KPair {
  dm: vec2<f32>,
  lo: vec2<f32>,
  hi: vec2<f32>,
}

fn kpair(h: vec2<u32>, sub: u32) -> KPair {
  let head = kblock_head(h);
  let scales = vec3<u32>(head[1], head[2], head[3]);
  return KPair(f16x2(head[0]), vec2<f32>(kscale_min(scales, sub)), vec2<f32>(kscale_min(scales, sub + 1u)));
}

// The pair's share of a row's dot, from the dots of their codes with x (ql, qh) and the sums of x
// per 16 values (sl, sh): d · (s · ql + s' · qh) − dmin · (m · Σx + m' · Σx').
fn kpair_sum(k: KPair, ql: f32, qh: f32, sl: vec2<f32>, sh: vec2<f32>) -> f32 {
  return k.dm.x * (k.lo.x * ql + k.hi.x * qh) - k.dm.y * (k.lo.y * (sl.x + sl.y) + k.hi.y * (sh.x + sh.y));
}

fn kpair_dot(h: vec2<u32>, sub: u32, ql: f32, qh: f32, sl: vec2<f32>, sh: vec2<f32>) -> f32 {
  return kpair_sum(kpair(h, sub), ql, qh, sl, sh);
}
