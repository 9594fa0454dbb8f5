// Reads alone from uniform buffers (bench:read-paths): llvmpipe 25.0 loads a uniform buffer lane
// by lane without a branch and bounds check per word, as it loads a storage buffer. A uniform
// binding holds at most 64 KiB (maxUniformBufferBindingSize), so the rows come in windows of
// WINDOW_POSITIONS whole positions, WINDOWS windows (one binding each) a dispatch. Workgroup
// (window, head) reads its head's rows in its window, READ_LANES lanes side by side on consecutive
// positions. WGSL cannot index bindings, so the loop is written out once for each window.
const HEADS: u32 = {{HEADS}}u;
const ROW_VEC4: u32 = {{ROW_VEC4}}u;
const READ_LANES: u32 = {{READ_LANES}}u;
const WINDOW_VEC4: u32 = {{WINDOW_POSITIONS}}u * HEADS * ROW_VEC4;

// This dispatch's first window, then how many positions each of its windows holds.
struct Windows {
  first: u32,
  positions: array<u32, {{WINDOWS}}>,
}

@group(0) @binding(0) var<storage, read> DISPATCH: Windows;
@group(0) @binding(1) var<storage, read_write> DST: array<vec4<u32>>;
#unroll W 0 {{WINDOWS}} 1
@group(0) @binding(2 + {{W}}) var<uniform> WINDOW_{{W}}: array<vec4<u32>, WINDOW_VEC4>;
#endunroll

@compute @workgroup_size(READ_LANES)
fn read_rows_uniform(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let window = wid.x / HEADS;
  let head = wid.x % HEADS;
  let positions = DISPATCH.positions[window];
  var sum = vec4<u32>(0u);
  #unroll W 0 {{WINDOWS}} 1
  if (window == {{W}}u) {
    for (var r = lid; r < positions; r += READ_LANES) {
      let row = (r * HEADS + head) * ROW_VEC4;
      for (var i = 0u; i < ROW_VEC4; i++) {
        sum += WINDOW_{{W}}[row + i];
      }
    }
  }
  #endunroll
  DST[((DISPATCH.first + window) * HEADS + head) * READ_LANES + lid] = sum;
}
