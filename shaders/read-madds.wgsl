// Reads with the multiply-adds decode attention cannot skip (bandwidth.ts's maddReads): the words
// of an F16 cache read as the copy reads them, lanes side by side on consecutive vec4s, and each
// half multiplied by GROUP query heads' values and added, as attention's scores (K) and weighted
// sums (V) need at the least. Each lane's sums are written so neither the reads nor the
// arithmetic can be dropped. What no attention kernel reading through this adapter's loads can beat.
const LANES: u32 = {{LANES}}u;

@group(0) @binding(0) var<storage, read> SRC: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> DST: array<vec4<f32>>;

@compute @workgroup_size(LANES)
fn read_madds(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let n = arrayLength(&SRC);
  let chunk = (n + nwg.x - 1u) / nwg.x;
  let begin = wid.x * chunk;
  let end = min(begin + chunk, n);
  // Each query head's values and accumulator, written out so that they stay in registers; the
  // values vary by lane, as a query's do, so that no multiply folds into a constant.
  let x = f32(lid);
  #unroll G 0 {{GROUP}} 1
  let qLo{{G}} = vec4<f32>(x + {{G}}.5, x * 0.5 + {{G}}.0, x * 0.25 + {{G}}.0, x * 0.125 + {{G}}.0);
  let qHi{{G}} = vec4<f32>(x + {{G}}.25, x * 0.75 + {{G}}.0, x * 0.375 + {{G}}.0, x * 0.625 + {{G}}.0);
  var acc{{G}} = vec4<f32>(0.0);
  #endunroll
  for (var i = begin + lid; i < end; i += LANES) {
    let w = SRC[i];
    let lo = vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
    let hi = vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w));
    #unroll G 0 {{GROUP}} 1
    acc{{G}} += qLo{{G}} * lo + qHi{{G}} * hi;
    #endunroll
  }
  var sum = vec4<f32>(0.0);
  #unroll G 0 {{GROUP}} 1
  sum += acc{{G}};
  #endunroll
  DST[wid.x * LANES + lid] = sum;
}
