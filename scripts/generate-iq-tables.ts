/**
 * Writes src-main/core/quants/iq-tables.ts: the lookup tables of the IQ quant types (grids, the
 * sign table, the IQ4_NL values, the IQ1 delta), read off llama.cpp's own decoders.
 *
 * Nothing here is copied from llama.cpp's sources. For each table we build blocks whose scale is
 * known exactly (d = 1.0 in f16, scale bits chosen so the multiplier is a power of two or one),
 * point every index slot at a chosen table entry, run llama.cpp's dequantize_row_<type> through
 * the test oracle, and read the entry off the output. Every value is checked to be what the
 * format allows (integers in range, consistent across repeated reads); the decoder tests
 * (test/core/quants/iq-quants.test.ts) then prove the whole tables against llama.cpp.
 *
 * Run: npx tsx scripts/generate-iq-tables.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ggmlTypeByName } from '../src-main/core/ggml-types';
import { llamaDequantize } from '../test/support/ggml-oracle';

const OUT = fileURLToPath(new URL('../src-main/core/quants/iq-tables.ts', import.meta.url));
const F16_ONE = 0x3c00;

function type(name: string) {
  const t = ggmlTypeByName(name);
  if (!t) throw new Error(`unknown type ${name}`);
  return t;
}

/** Decodes `blocks` blocks of `name` with llama.cpp. */
function decode(name: string, bytes: Uint8Array): Float32Array {
  const t = type(name);
  const blocks = bytes.length / t.typeSize;
  if (!Number.isInteger(blocks)) throw new Error(`${name}: ${bytes.length} bytes is not whole blocks`);
  return llamaDequantize(t.id, bytes, blocks * t.blockSize);
}

function fail(msg: string): never {
  throw new Error(`probe: ${msg}`);
}

function integer(v: number, what: string, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max) fail(`${what}: ${v} is not an integer in [${min}, ${max}]`);
  return v;
}

const put16 = (b: Uint8Array, o: number, v: number) => {
  b[o] = v & 0xff;
  b[o + 1] = (v >>> 8) & 0xff;
};
const put32 = (b: Uint8Array, o: number, v: number) => {
  put16(b, o, v & 0xffff);
  put16(b, o + 2, v >>> 16);
};

// ---------------------------------------------------------------------------------------------
// IQ4_NL: 32 values per block, d (f16) then 16 bytes of two 4-bit indices (low nibble → first
// half of the block, high nibble → second half). With d = 1 the output is the table itself.

function probeIq4nl(): number[] {
  const b = new Uint8Array(type('IQ4_NL').typeSize);
  put16(b, 0, F16_ONE);
  for (let j = 0; j < 16; j++) b[2 + j] = j | ((15 - j) << 4);
  const y = decode('IQ4_NL', b);
  const values: number[] = [];
  for (let j = 0; j < 16; j++) {
    const v = integer(y[j]!, `iq4nl[${j}]`, -128, 127);
    if (y[16 + 15 - j] !== v) fail(`iq4nl[${j}] differs between nibbles`);
    values.push(v);
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// IQ2_XXS: d, then per 32 values 8 bytes: four grid indices (one byte each, 8 values each) and a
// u32 holding four 7-bit sign indices and a 4-bit scale s in the top bits; the group multiplier
// is d·(0.5+s)/4, so s = 0 and d = 1 give 1/8.

function probeIq2xxsGrid(): number[][] {
  const t = type('IQ2_XXS');
  const blocks = 256 / 32;
  const b = new Uint8Array(blocks * t.typeSize);
  for (let k = 0; k < 256; k++) {
    const blk = k >> 5,
      ib = (k >> 2) & 7,
      l = k & 3;
    const o = blk * t.typeSize;
    put16(b, o, F16_ONE);
    b[o + 2 + ib * 8 + l] = k; // sign word (bytes 4..7 of the group) stays 0
  }
  const y = decode('IQ2_XXS', b);
  return Array.from({ length: 256 }, (_, k) =>
    Array.from({ length: 8 }, (_, j) => integer(y[k * 8 + j]! * 8, `iq2xxs[${k}][${j}]`, 0, 255)),
  );
}

/** The sign table: 7-bit index → 8 sign bits (bit j set: value j negated). */
function probeSigns(grid0: number[]): number[] {
  const t = type('IQ2_XXS');
  const blocks = 128 / 32;
  const b = new Uint8Array(blocks * t.typeSize);
  for (let s = 0; s < 128; s++) {
    const blk = s >> 5,
      ib = (s >> 2) & 7,
      l = s & 3;
    const o = blk * t.typeSize + 2 + ib * 8;
    put16(b, blk * t.typeSize, F16_ONE);
    // grid index bytes stay 0: every slot reads grid entry 0, whose values are all > 0
    const w = (b[o + 4]! | (b[o + 5]! << 8) | (b[o + 6]! << 16) | (b[o + 7]! << 24)) >>> 0;
    put32(b, o + 4, (w | (s << (7 * l))) >>> 0);
  }
  const y = decode('IQ2_XXS', b);
  if (grid0.some((v) => v <= 0)) fail('grid entry 0 has a zero; cannot read signs from it');
  const signs: number[] = [];
  for (let s = 0; s < 128; s++) {
    let bits = 0;
    for (let j = 0; j < 8; j++) {
      const v = y[s * 8 + j]! * 8;
      if (Math.abs(v) !== grid0[j]) fail(`sign ${s}: magnitude ${v} is not grid[0][${j}] = ${grid0[j]}`);
      if (v < 0) bits |= 1 << j;
    }
    signs.push(bits);
  }
  return signs;
}

// IQ2_XS: d, 32 u16 (9-bit grid index | 7-bit sign index << 9), then 8 scale bytes (two 4-bit
// scales per 32 values, multiplier d·(0.5+s)/4).
function probeIq2xsGrid(): number[][] {
  const t = type('IQ2_XS');
  const n = 512,
    blocks = n / 32;
  const b = new Uint8Array(blocks * t.typeSize);
  for (let k = 0; k < n; k++) {
    const blk = k >> 5,
      q = k & 31;
    put16(b, blk * t.typeSize, F16_ONE);
    put16(b, blk * t.typeSize + 2 + 2 * q, k);
  }
  const y = decode('IQ2_XS', b);
  return Array.from({ length: n }, (_, k) =>
    Array.from({ length: 8 }, (_, j) => integer(y[k * 8 + j]! * 8, `iq2xs[${k}][${j}]`, 0, 255)),
  );
}

// IQ2_S: d, 32 low index bytes, 32 sign bytes, 8 bytes of high index bits (2 bits per group of 8
// values), 8 scale bytes as IQ2_XS.
function probeIq2sGrid(): number[][] {
  const t = type('IQ2_S');
  const n = 1024,
    blocks = n / 32;
  const b = new Uint8Array(blocks * t.typeSize);
  for (let k = 0; k < n; k++) {
    const blk = k >> 5,
      q = k & 31,
      ib = q >> 2,
      l = q & 3;
    const o = blk * t.typeSize;
    put16(b, o, F16_ONE);
    b[o + 2 + q] = k & 0xff;
    b[o + 2 + 64 + ib] = b[o + 2 + 64 + ib]! | (((k >> 8) & 3) << (2 * l));
  }
  const y = decode('IQ2_S', b);
  return Array.from({ length: n }, (_, k) =>
    Array.from({ length: 8 }, (_, j) => integer(y[k * 8 + j]! * 8, `iq2s[${k}][${j}]`, 0, 255)),
  );
}

// IQ3_XXS: d, 64 grid index bytes (4 values each), then 8 u32 of four 7-bit sign indices and a
// 4-bit scale s (multiplier d·(0.5+s)/2: s = 0 gives 1/4).
function probeIq3xxsGrid(): number[][] {
  const t = type('IQ3_XXS');
  const n = 256,
    blocks = n / 64;
  const b = new Uint8Array(blocks * t.typeSize);
  for (let k = 0; k < n; k++) {
    const blk = k >> 6,
      q = k & 63;
    put16(b, blk * t.typeSize, F16_ONE);
    b[blk * t.typeSize + 2 + q] = k;
  }
  const y = decode('IQ3_XXS', b);
  return Array.from({ length: n }, (_, k) =>
    Array.from({ length: 4 }, (_, j) => integer(y[k * 4 + j]! * 4, `iq3xxs[${k}][${j}]`, 0, 255)),
  );
}

// IQ3_S: d, 64 low index bytes, 8 bytes of ninth index bits (one bit per index), 32 sign bytes,
// 4 scale bytes (4 bits per 32 values, multiplier d·(1+2s): s = 0 gives d).
function probeIq3sGrid(): number[][] {
  const t = type('IQ3_S');
  const n = 512,
    blocks = n / 64;
  const b = new Uint8Array(blocks * t.typeSize);
  for (let k = 0; k < n; k++) {
    const blk = k >> 6,
      q = k & 63;
    const o = blk * t.typeSize;
    put16(b, o, F16_ONE);
    b[o + 2 + q] = k & 0xff;
    b[o + 2 + 64 + (q >> 3)] = b[o + 2 + 64 + (q >> 3)]! | (((k >> 8) & 1) << (q & 7));
  }
  const y = decode('IQ3_S', b);
  return Array.from({ length: n }, (_, k) =>
    Array.from({ length: 4 }, (_, j) => integer(y[k * 4 + j]!, `iq3s[${k}][${j}]`, 0, 255)),
  );
}

// IQ1_S: d, 32 low index bytes, 8 u16: per 32 values three high index bits per group of 8
// (bits 3l..3l+2), a 3-bit scale s at bit 12 (multiplier d·(2s+1)) and the delta sign at bit 15.
// Each value is multiplier·(grid + delta). Decoding every entry twice, once with each delta
// sign, separates grid (the mean) from delta (half the difference).
function probeIq1s(): { grid: number[][]; delta: number } {
  const t = type('IQ1_S');
  const n = 2048,
    per = 32,
    blocks = n / per;
  const make = (deltaSign: number) => {
    const b = new Uint8Array(blocks * t.typeSize);
    for (let k = 0; k < n; k++) {
      const blk = Math.floor(k / per),
        q = k % per,
        ib = q >> 2,
        l = q & 3;
      const o = blk * t.typeSize;
      put16(b, o, F16_ONE);
      b[o + 2 + q] = k & 0xff;
      const qo = o + 2 + 32 + 2 * ib;
      const w = b[qo]! | (b[qo + 1]! << 8) | (((k >> 8) & 7) << (3 * l)) | (deltaSign << 15);
      put16(b, qo, w);
    }
    return decode('IQ1_S', b);
  };
  return splitDelta(make(0), make(1), n, 'iq1s');
}

// IQ1_M: 32 low index bytes, 16 bytes of (3 high index bits + delta sign) nibbles, one per group
// of 8 values, then 4 u16 whose low 12 bits hold 3-bit scales (multiplier d·(2s+1)) and whose top
// nibbles together make the f16 d.
function probeIq1m(): { grid: number[][]; delta: number } {
  const t = type('IQ1_M');
  const n = 2048,
    per = 32,
    blocks = n / per;
  const make = (deltaSign: number) => {
    const b = new Uint8Array(blocks * t.typeSize);
    for (let k = 0; k < n; k++) {
      const blk = Math.floor(k / per),
        q = k % per;
      const o = blk * t.typeSize;
      b[o + q] = k & 0xff;
      const nib = ((k >> 8) & 7) | (deltaSign << 3);
      b[o + 32 + (q >> 1)] = b[o + 32 + (q >> 1)]! | (nib << (4 * (q & 1)));
      for (let s = 0; s < 4; s++) put16(b, o + 48 + 2 * s, ((F16_ONE >> (4 * s)) & 0xf) << 12);
    }
    return decode('IQ1_M', b);
  };
  return splitDelta(make(0), make(1), n, 'iq1m');
}

function splitDelta(
  plus: Float32Array,
  minus: Float32Array,
  n: number,
  what: string,
): { grid: number[][]; delta: number } {
  let delta: number | undefined;
  const grid = Array.from({ length: n }, (_, k) =>
    Array.from({ length: 8 }, (_, j) => {
      const a = plus[k * 8 + j]!,
        c = minus[k * 8 + j]!;
      const d = (a - c) / 2;
      if (delta === undefined) delta = d;
      else if (d !== delta) fail(`${what}[${k}][${j}]: delta ${d} differs from ${delta}`);
      return integer((a + c) / 2, `${what}[${k}][${j}]`, -128, 127);
    }),
  );
  if (delta === undefined || !(delta > 0)) fail(`${what}: no positive delta`);
  return { grid, delta };
}

// ---------------------------------------------------------------------------------------------
// Encoding: each grid as its sorted distinct values plus, per value, its index into them packed
// into the fewest bits (2 for the three-level grids, 3 for the IQ3 grids) as a little-endian bit
// stream written in hex: hex digit k holds bits 4k..4k+3 of the stream.

function encodeGrid(name: string, rows: number[][]): string {
  const levels = [...new Set(rows.flat())].sort((a, b) => a - b);
  const bits = Math.max(1, Math.ceil(Math.log2(levels.length)));
  const values = rows.flat();
  const nibbles = new Uint8Array(Math.ceil((values.length * bits) / 4));
  values.forEach((v, i) => {
    const index = levels.indexOf(v);
    for (let b = 0; b < bits; b++) {
      const pos = i * bits + b;
      if ((index >> b) & 1) nibbles[pos >> 2] = nibbles[pos >> 2]! | (1 << (pos & 3));
    }
  });
  const hex = Array.from(nibbles, (n) => n.toString(16)).join('');
  const lines: string[] = [];
  for (let i = 0; i < hex.length; i += 96) lines.push(`  '${hex.slice(i, i + 96)}'`);
  return `export const ${name}: LazyGrid = new LazyGrid(() => grid(${rows.length}, ${rows[0]!.length}, ${bits}, [${levels.join(', ')}], [\n${lines.join(',\n')},\n]));\n`;
}

function main(): void {
  const iq4nl = probeIq4nl();
  const iq2xxs = probeIq2xxsGrid();
  const signs = probeSigns(iq2xxs[0]!);
  const iq2xs = probeIq2xsGrid();
  const iq2s = probeIq2sGrid();
  const iq3xxs = probeIq3xxsGrid();
  const iq3s = probeIq3sGrid();
  const iq1s = probeIq1s();
  const iq1m = probeIq1m();
  if (JSON.stringify(iq1s.grid) !== JSON.stringify(iq1m.grid)) fail('IQ1_S and IQ1_M read different grids');
  if (iq1s.delta !== iq1m.delta) fail(`IQ1_S delta ${iq1s.delta} differs from IQ1_M delta ${iq1m.delta}`);

  const text = `// GENERATED FILE — do not edit by hand.
//
// Produced by scripts/generate-iq-tables.ts, which reads every table below off llama.cpp's own
// dequantize_row_<type> functions (libggml-base from node-llama-cpp, via test/support/ggml-oracle)
// by decoding probe blocks with a known scale. Regenerate with:
//
//   npx tsx scripts/generate-iq-tables.ts
//
// test/core/quants/iq-quants.test.ts proves the decoders built on these tables bit-exact against
// llama.cpp.

/**
 * Unpacks a grid of \`entries\` × \`width\` values. Each value is stored as its index into
 * \`levels\`, \`bits\` bits wide, in a little-endian bit stream written in hex (digit k holds
 * stream bits 4k..4k+3). Entry i occupies [i·width, (i+1)·width) of the result.
 */
function grid(entries: number, width: number, bits: number, levels: readonly number[], chunks: readonly string[]): Float32Array {
  const hex = chunks.join('');
  const out = new Float32Array(entries * width);
  if (hex.length !== Math.ceil((out.length * bits) / 4)) throw new Error('iq-tables: grid has the wrong length');
  const nibbles = new Uint8Array(hex.length);
  for (let k = 0; k < hex.length; k++) {
    const c = hex.charCodeAt(k);
    nibbles[k] = c <= 57 ? c - 48 : c - 87; // '0'..'9', 'a'..'f'
  }
  let pos = 0;
  for (let i = 0; i < out.length; i++) {
    let index = 0;
    for (let b = 0; b < bits; b++, pos++) index |= ((nibbles[pos >> 2]! >> (pos & 3)) & 1) << b;
    out[i] = levels[index]!;
  }
  return out;
}

/**
 * A grid unpacked on first use: unpacking them all costs every thread that loads the codecs
 * milliseconds (top-level code runs unoptimized), and only the IQ types read them.
 */
export class LazyGrid {
  #values: Float32Array | undefined;
  constructor(private readonly unpack: () => Float32Array) {}
  /** Whether the grid has been unpacked (by a codec of its type). */
  get built(): boolean {
    return this.#values !== undefined;
  }
  get values(): Float32Array {
    return (this.#values ??= this.unpack());
  }
}

/** IQ4_NL / IQ4_XS: the 16 non-linear 4-bit values. */
export const IQ4NL_VALUES: Float32Array = new Float32Array([${iq4nl.join(', ')}]);

/** 7-bit sign index → 8 sign bits (bit j set: value j is negated). Used by IQ2_XXS, IQ2_XS, IQ3_XXS. */
export const IQ2_SIGNS: Uint8Array = new Uint8Array([
${chunk(
  signs.map((s) => `0x${s.toString(16).padStart(2, '0')}`),
  16,
)
  .map((l) => `  ${l.join(', ')},`)
  .join('\n')}
]);

/** IQ1_S / IQ1_M: each value is scale·(grid + delta) or scale·(grid − delta). */
export const IQ1_DELTA = ${iq1s.delta};

/** IQ2_XXS: 256 entries of 8 values. */
${encodeGrid('IQ2XXS_GRID', iq2xxs)}
/** IQ2_XS: 512 entries of 8 values. */
${encodeGrid('IQ2XS_GRID', iq2xs)}
/** IQ2_S: 1024 entries of 8 values. */
${encodeGrid('IQ2S_GRID', iq2s)}
/** IQ3_XXS: 256 entries of 4 values. */
${encodeGrid('IQ3XXS_GRID', iq3xxs)}
/** IQ3_S: 512 entries of 4 values. */
${encodeGrid('IQ3S_GRID', iq3s)}
/** IQ1_S / IQ1_M: 2048 entries of 8 values in {-1, 0, 1}. */
${encodeGrid('IQ1S_GRID', iq1s.grid)}`;
  writeFileSync(OUT, text);
  console.log(`wrote ${OUT}`);
}

function chunk<T>(a: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < a.length; i += n) out.push(a.slice(i, i + n));
  return out;
}

main();
