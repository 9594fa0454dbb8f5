/**
 * The RoPE angle table the rope kernel reads: (cos, sin) for every position and rotated pair,
 * computed on the CPU in float arithmetic exactly as llama.cpp's rope cache (ggml-cpu
 * ggml_rope_cache_init + rope_yarn): theta starts at the position and is multiplied by
 * theta_scale once per pair, so large positions round the way llama.cpp's do.
 */
import type { RopeParams } from './hparams';

const f = Math.fround;

/** YaRN's correction range [start, end] of pair dimensions (ggml_rope_yarn_corr_dims). */
export function yarnCorrDims(rope: RopeParams): [number, number] {
  const corrDim = (nRotations: number) =>
    f(
      f(rope.nRot * f(Math.log(f(rope.nCtxOrig / f(nRotations * 2 * f(Math.PI)))))) / f(2 * f(Math.log(rope.freqBase))),
    );
  const start = Math.floor(corrDim(rope.betaFast));
  const end = Math.ceil(corrDim(rope.betaSlow));
  return [Math.max(0, start), Math.min(rope.nRot - 1, end)];
}

/** Bytes of ropeTable's table for `positions`. */
export function ropeTableBytes(rope: Pick<RopeParams, 'nRot'>, positions: number): number {
  return positions * (rope.nRot / 2) * 2 * 4;
}

/**
 * Float32Array of positions × nRot/2 (cos, sin) pairs. `freqFactors` (rope_freqs.weight, nRot/2
 * values) divide each pair's angle.
 */
export function ropeTable(rope: RopeParams, positions: number, freqFactors?: Float32Array): Float32Array {
  const half = rope.nRot / 2;
  if (freqFactors && freqFactors.length < half)
    throw new Error(`rope_freqs has ${freqFactors.length} factors for ${half} pairs`);
  const table = new Float32Array(ropeTableBytes(rope, positions) / 4);
  const thetaScale = f(Math.pow(rope.freqBase, f(-2 / rope.nRot)));
  const [low, high] = rope.extFactor !== 0 ? yarnCorrDims(rope) : [0, 0];
  const yarnMscale =
    rope.extFactor !== 0 ? f(rope.attnFactor * f(1 + f(0.1 * f(Math.log(f(1 / rope.freqScale)))))) : f(rope.attnFactor);
  for (let p = 0; p < positions; p++) {
    let theta = f(p);
    for (let i = 0; i < half; i++) {
      const extrap = f(theta / (freqFactors ? freqFactors[i]! : 1));
      const interp = f(rope.freqScale * extrap);
      let angle = interp;
      if (rope.extFactor !== 0) {
        // rope_yarn_ramp with i0 / 2 = i.
        const y = f(f(i - low) / Math.max(0.001, f(high - low)));
        const rampMix = f(f(1 - Math.min(1, Math.max(0, y))) * rope.extFactor);
        angle = f(f(interp * f(1 - rampMix)) + f(extrap * rampMix));
      }
      const o = (p * half + i) * 2;
      table[o] = f(Math.cos(angle)) * yarnMscale;
      table[o + 1] = f(Math.sin(angle)) * yarnMscale;
      theta = f(theta * thetaScale);
    }
  }
  return table;
}
