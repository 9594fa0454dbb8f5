/**
 * Row groups: the weight layout on CPU adapters (lavapipe, SwiftShader) for the types whose decode
 * steps gain from it. There the decode mat-vec's threads are SIMD lanes of a CPU, each walking its
 * own MATVEC_THREAD_ROWS rows in step; llvmpipe turns every per-lane load into scalar loads, and
 * with rows as stored the lanes' loads land rows apart (55% of copy for the loads alone on
 * lavapipe), against ~90% when the lanes read neighbouring 16-byte quads (an experiment recorded in
 * `git show fec2e69:docs/performance.md`, "What bounds the K-quant decode mat-vec on lavapipe").
 *
 * Layout of one part (whole rows of a tensor, its main plane for a repacked type): its rows in
 * groups of lanes × rows; row i of a group belongs to lane l = ⌊i / rows⌋ as its row r = i mod rows,
 * and quad q of its block b lies at quad ((b · rows + r) · quadsPerBlock + q) · lanes + l from the
 * group's start, so for every (block, row of the thread, quad) the lanes' quads are side by side.
 * A group occupies the same bytes as its rows as stored; the rows after the last full group stay
 * as stored. The kernels read it through one WGSL helper, w_block (shaders/quant/common.wgsl).
 */
import type { GpuInfo } from '../../engine-wire/protocol';

export interface RowGroups {
  /** Threads whose rows are interleaved (the decode workgroup's). */
  readonly lanes: number;
  /** Rows each thread owns (MATVEC_THREAD_ROWS). */
  readonly rows: number;
}

/**
 * Rows each thread of the decode kernel owns on a CPU adapter: each step's x is loaded (and its
 * sums taken) once for that many rows. 8 measured faster than 1 and 4 on lavapipe and SwiftShader
 * (Q4_K, Q6_K, Q8_0; `git show fec2e69:docs/performance.md`, "Third pass").
 */
export const MATVEC_THREAD_ROWS = 8;

/**
 * Whether the decode steps on a CPU adapter loop over a thread's rows at run time rather than
 * unrolled MATVEC_THREAD_ROWS times (matmul.wgsl's MV_ROW_END), the K-quants' steps taking a block
 * a pair of sub-blocks at a time (MV_PAIRS), which also serves a batched decode step's 2–4 tokens:
 * on lavapipe, where the loop is the faster and compiles several times sooner (docs/engine.md,
 * "Kernel shapes"; figures in docs/performance.md); not on SwiftShader, whose unrolled rows and
 * whole-block steps are faster (pairs: Q4_K 1.3×, Q5_K 1.5× its time).
 */
export function cpuRowLoop(info: GpuInfo): boolean {
  return /llvmpipe/i.test(info.name);
}

/**
 * Whether decode attention's CPU shape loads a whole K or V row before its arithmetic
 * (attention-decode.wgsl's LOAD_DIMS): on SwiftShader, which splits its code at every lane's load
 * (1.26× as fast at depth 4096, `npm run bench:attention -- --against`); not on lavapipe (×0.91–0.94).
 */
export function cpuRowLoadsFirst(info: GpuInfo): boolean {
  return /swiftshader/i.test(info.name);
}

/**
 * Threads of the decode kernel on a CPU adapter: the adapter's subgroup where that size is fixed
 * (lavapipe 8, SwiftShader 4: one SIMD register of lanes), else 64.
 */
export function cpuLanes(info: GpuInfo): number {
  const size = info.subgroupMinSize;
  return size >= 4 && size === info.subgroupMaxSize ? size : 64;
}

/** The types uploaded in row groups on CPU adapters (their decoders address blocks through w_block). */
const GROUPED_TYPES: ReadonlySet<string> = new Set(['Q4_K', 'Q5_K', 'Q6_K']);

/** How a weight of `typeName` is laid out on this adapter: in row groups, or as stored (undefined). */
export function rowGroupsFor(info: GpuInfo, typeName: string): RowGroups | undefined {
  if (!info.cpuShapes || !GROUPED_TYPES.has(typeName)) return undefined;
  return { lanes: cpuLanes(info), rows: MATVEC_THREAD_ROWS };
}

/** The WGSL defines that tell the kernels a weight's layout (0: as stored). */
export function rowGroupDefines(groups: RowGroups | undefined): { ROW_LANES: number; ROW_THREAD_ROWS: number } {
  return { ROW_LANES: groups?.lanes ?? 0, ROW_THREAD_ROWS: groups?.rows ?? 0 };
}

/**
 * Which quad of a row group as stored (quad (i · blocksPerRow + b) · quads + q for quad q of block b
 * of its row i) lies at quad `j` of the group as uploaded: the layout above, inverted.
 */
export function storedQuadOf(j: number, blocksPerRow: number, quads: number, g: RowGroups): number {
  const lane = j % g.lanes;
  const slot = Math.floor(j / g.lanes); // (b · rows + r) · quads + q
  const q = slot % quads;
  const r = Math.floor(slot / quads) % g.rows;
  const b = Math.floor(slot / quads / g.rows);
  return ((lane * g.rows + r) * blocksPerRow + b) * quads + q;
}
