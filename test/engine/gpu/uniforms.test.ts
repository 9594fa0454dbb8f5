/**
 * Uniform structs declared once in TypeScript (uniforms.ts): the WGSL text and the packer agree on
 * every field's offset, the GPU reads each packed value back from its field, and every uniform a
 * shader binds is one of kernel-uniforms.ts's, placed by `#struct` (none written by hand).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kernelUniform, kernelUniformNames } from '../../../src-main/engine/gpu/kernel-uniforms';
import { shaderSource } from '../../../src-main/engine/gpu/shader-source';
import { uniformStruct } from '../../../src-main/engine/gpu/uniforms';
import { buffer, readU32, run, testGpu } from '../gpu-harness';

const SHADERS = join(import.meta.dirname, '../../../shaders');

// A copy of shaders/ with one bad file: shader-source reads GUFO_SHADERS on first use.
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-struct-'));
  cpSync(SHADERS, dir, { recursive: true });
  writeFileSync(join(dir, 'bad-struct.wgsl'), '#struct NoSuchUniform\n');
  process.env.GUFO_SHADERS = dir;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const Mixed = uniformStruct('Mixed', { count: 'u32', gain: 'f32', shift: 'i32', stride: 'u32', bias: 'f32' });
const MIXED_VALUES = { count: 7, gain: 0.1, shift: -3, stride: 2 ** 32 - 1, bias: -2.5 };

describe('uniformStruct', () => {
  it('lays 32-bit fields out in order and pads the struct to 16 bytes', () => {
    expect(
      ['count', 'gain', 'shift', 'stride', 'bias'].map((f) => Mixed.offsetOf(f as keyof typeof Mixed.fields)),
    ).toEqual([0, 4, 8, 12, 16]);
    expect(Mixed.byteSize).toBe(32);
    expect(Mixed.wgsl).toBe(
      'struct Mixed {\n  count: u32,\n  gain: f32,\n  shift: i32,\n  stride: u32,\n  bias: f32,\n  _pad0: u32,\n  _pad1: u32,\n  _pad2: u32,\n}',
    );
    expect(uniformStruct('Four', { a: 'u32', b: 'u32', c: 'u32', d: 'f32' }).byteSize).toBe(16);
  });

  it('packs each named value at its offset, into a new buffer or a slot of a larger one', () => {
    const view = new DataView(Mixed.pack(MIXED_VALUES));
    expect(view.byteLength).toBe(32);
    expect(view.getUint32(0, true)).toBe(7);
    expect(view.getFloat32(4, true)).toBe(Math.fround(0.1));
    expect(view.getInt32(8, true)).toBe(-3);
    expect(view.getUint32(12, true)).toBe(2 ** 32 - 1);
    expect(view.getFloat32(16, true)).toBe(-2.5);

    const slots = new ArrayBuffer(512);
    expect(Mixed.pack({ ...MIXED_VALUES, count: 9 }, slots, 256)).toBe(slots);
    expect(new DataView(slots).getUint32(256, true)).toBe(9);
    expect(new DataView(slots).getFloat32(256 + 16, true)).toBe(-2.5);
    expect(new Uint32Array(slots, 0, 64).every((w) => w === 0)).toBe(true);
  });

  it('names the struct and field of a value that does not fit', () => {
    const { gain: _, ...noGain } = MIXED_VALUES;
    expect(() => Mixed.pack(noGain as typeof MIXED_VALUES)).toThrow(
      'uniform struct Mixed: gain is undefined, not a number',
    );
    expect(() => Mixed.pack({ ...MIXED_VALUES, count: -1 })).toThrow('uniform struct Mixed: count = -1 is not a u32');
    expect(() => Mixed.pack({ ...MIXED_VALUES, stride: 1.5 })).toThrow('stride = 1.5 is not a u32');
    expect(() => Mixed.pack({ ...MIXED_VALUES, shift: 2 ** 31 })).toThrow(`shift = ${2 ** 31} is not a i32`);
    expect(() => Mixed.pack({ ...MIXED_VALUES, bias: NaN })).toThrow('bias is NaN');
    expect(() => uniformStruct('Bad', { 'x-y': 'u32' })).toThrow(
      'uniform struct Bad: field "x-y" is not a WGSL identifier',
    );
  });

  it('is read by the GPU at the offsets it packs', async () => {
    const ctx = await testGpu();
    const code = `${Mixed.wgsl}
@group(0) @binding(0) var<uniform> p: Mixed;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() {
  out[0] = p.count;
  out[1] = bitcast<u32>(p.gain);
  out[2] = bitcast<u32>(p.shift);
  out[3] = p.stride;
  out[4] = bitcast<u32>(p.bias);
}`;
    const module = ctx.device.createShaderModule({ code });
    const pipeline = ctx.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const uniform = ctx.device.createBuffer({
      size: Mixed.byteSize,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    const packed = Mixed.pack(MIXED_VALUES);
    ctx.device.queue.writeBuffer(uniform, 0, packed);
    const out = buffer(ctx, 5 * 4);
    const group = ctx.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: uniform } },
        { binding: 1, resource: { buffer: out } },
      ],
    });
    await run(ctx, [
      {
        encode(pass) {
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, group);
          pass.dispatchWorkgroups(1);
        },
      },
    ]);
    expect([...(await readU32(ctx, out, 5))]).toEqual([...new Uint32Array(packed, 0, 5)]);
  });
});

describe('kernel uniforms', () => {
  const wgslFiles = [
    ...readdirSync(SHADERS).filter((f) => f.endsWith('.wgsl')),
    ...readdirSync(join(SHADERS, 'quant')).map((f) => `quant/${f}`),
  ];

  it('are the only uniforms the shaders bind, and no shader writes one by hand', () => {
    const placed = new Set<string>();
    for (const file of wgslFiles) {
      const text = readFileSync(join(SHADERS, file), 'utf8');
      for (const [, type] of text.matchAll(/var<uniform>\s+\w+\s*:\s*(\w+)/g)) {
        expect(kernelUniform(type!), `shaders/${file} binds ${type}`).toBeDefined();
      }
      for (const [, name] of text.matchAll(/^\s*struct\s+(\w+)/gm)) {
        expect(kernelUniform(name!), `shaders/${file} declares struct ${name} by hand`).toBeUndefined();
      }
      for (const [, name] of text.matchAll(/^\s*#struct\s+(\w+)/gm)) placed.add(name!);
    }
    expect([...placed].sort()).toEqual(kernelUniformNames().sort());
  });

  it('are placed once per shader, with their declared text', () => {
    const matmul = shaderSource('matmul.wgsl', { TYPE: 'q4_k', WG: 64, ROWS: 2, TT: 1, SUBGROUPS: false });
    expect(matmul.split(kernelUniform('WeightUniform')!.wgsl)).toHaveLength(2);
    // kv-store.wgsl includes step.wgsl, which places StepUniform: once.
    const attention = shaderSource('kv-store.wgsl');
    expect(attention.match(/^struct StepUniform \{/gm)).toHaveLength(1);
    expect(attention).toContain(kernelUniform('AttentionUniform')!.wgsl);
  });
});

describe('#struct', () => {
  it('names the file and the unknown struct', () => {
    expect(() => shaderSource('bad-struct.wgsl')).toThrow(
      `${join(dir, 'bad-struct.wgsl')}: #struct NoSuchUniform is not a uniform struct of kernel-uniforms.ts (StepUniform, WeightUniform`,
    );
  });
});
