// y = W · x for a prefill's n tokens on a GPU (the CPU adapters' is matmat.wgsl): a workgroup
// computes a tile of BM rows × BN tokens, as llama.cpp's mul_mm does. For each 32-value unit (one
// K slice) its threads decode the tile's BM rows once (thread i the unit of row i, the type's
// decode_unit) and load the BN tokens' x into workgroup memory; after a barrier each thread
// multiplies a TM rows × TN tokens register tile from there (rows BM / TM apart, tokens BN / TN
// apart), so a decoded value serves BN tokens and an x value BM rows, instead of matmul.wgsl's
// mat-mat rereading x per row. 16 KiB of workgroup memory at most (WebGPU's default limit):
// BM·32 + BN·32 f32, each row of 8 vec4s padded to 9 so neighbouring rows fall in other banks.
// Rows past the part's end decode its last row, tokens past n reread token n − 1; neither is
// stored. Workgroups beyond 65535 in x wrap into y (row tile = x + y · num_workgroups.x);
// workgroup_id.z picks the token tile.
#if SHADER_F16
enable f16;
#endif
#include "quant/common.wgsl"
#include "quant/{{TYPE}}.wgsl"
#include "weight-io.wgsl"

const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const WG: u32 = (BM / TM) * (BN / TN);
// vec4s per staged row (8 of values, 1 of padding).
const STRIDE: u32 = 9u;
const_assert BM == WG; // one thread decodes each row's unit
const_assert (BM + BN) * STRIDE * 16u <= 16384u;

var<workgroup> w_tile: array<vec4<f32>, BM * STRIDE>;
var<workgroup> x_tile: array<vec4<f32>, BN * STRIDE>;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let first = wid.z * BN;
  let row0 = (wid.x + wid.y * nwg.x) * BM;
  // Uniform for the workgroup: every thread returns or none does (barriers follow).
  if (first >= P.n || row0 >= P.rows) { return; }
  // This thread's register tile: rows tr + i · BM / TM, tokens tt + j · BN / TN.
  let tr = lid % (BM / TM);
  let tt = lid / (BM / TM);
  let decode_row = min(row0 + lid, P.rows - 1u);
  var acc: array<f32, TM * TN>;
  for (var u = 0u; u < P.units; u++) {
    var w: array<vec4<f32>, 8>;
    decode_unit(decode_row, u, &w);
    for (var k = 0u; k < 8u; k++) { w_tile[lid * STRIDE + k] = w[k]; }
    // x: BN tokens × 8 vec4s, spread over the WG threads.
    for (var i = lid; i < BN * 8u; i += WG) {
      let t = i / 8u;
      let xb = P.x_offset + min(first + t, P.n - 1u) * P.x_stride;
      x_tile[t * STRIDE + i % 8u] = load_x4(xb, 32u * u + 4u * (i % 8u));
    }
    workgroupBarrier();
    for (var k = 0u; k < 8u; k++) {
      var xs: array<vec4<f32>, TN>;
      for (var j = 0u; j < TN; j++) { xs[j] = x_tile[(tt + j * (BN / TN)) * STRIDE + k]; }
      for (var i = 0u; i < TM; i++) {
        let wv = w_tile[(tr + i * (BM / TM)) * STRIDE + k];
        for (var j = 0u; j < TN; j++) { acc[i * TN + j] += dot(wv, xs[j]); }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < TM; i++) {
    let row = row0 + tr + i * (BM / TM);
    if (row >= P.rows) { break; }
    for (var j = 0u; j < TN; j++) {
      let t = first + tt + j * (BN / TN);
      if (t >= P.n) { break; }
      let y = P.y_offset + t * P.y_stride + out_row(row);
      store_y(y, acc[i * TN + j]);
    }
  }
}
