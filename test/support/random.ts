/**
 * Seeded pseudo-random numbers for tests: mulberry32 plus a few distributions. Same seed, same
 * sequence, on every machine.
 */
// Function properties, not methods: they are closures, safe to pass on unbound (rng.gaussian).
export interface Rng {
  /** Uniform in [0, 1). */
  next: () => number;
  /** Uniform integer in [0, n). */
  int: (n: number) => number;
  /** Standard normal (Box–Muller). */
  gaussian: () => number;
  /** Heavy-tailed: Student's t with `dof` degrees of freedom (default 3). */
  studentT: (dof?: number) => number;
  /** Heavy-tailed and skewed toward outliers: a standard normal cubed. */
  gaussianCubed: () => number;
  /** `n` uniformly random bytes. */
  bytes: (n: number) => Uint8Array;
}

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let spare: number | undefined;
  const gaussian = (): number => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    let u = 0;
    while (u === 0) u = next();
    const v = next();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    gaussian,
    studentT(dof = 3) {
      let chi2 = 0;
      for (let i = 0; i < dof; i++) {
        const g = gaussian();
        chi2 += g * g;
      }
      return gaussian() / Math.sqrt(chi2 / dof);
    },
    gaussianCubed() {
      const g = gaussian();
      return g * g * g;
    },
    bytes(n) {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = (next() * 256) | 0;
      return out;
    },
  };
}

/** `n` f32 values drawn from `draw`, times `scale`. */
export function randomF32(n: number, draw: () => number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = draw() * scale;
  return out;
}
