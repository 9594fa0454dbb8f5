// A plain buffer copy, 16 bytes per invocation per step (grid-stride loop): the memory bandwidth
// yardstick for `gufo bench` (bandwidth.ts).
const WG: u32 = {{WG}}u;

@group(0) @binding(0) var<storage, read> SRC: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> DST: array<vec4<u32>>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let step = nwg.x * WG;
  let n = arrayLength(&SRC);
  for (var i = gid.x; i < n; i += step) {
    DST[i] = SRC[i];
  }
}
