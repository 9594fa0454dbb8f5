/**
 * Small helpers for kernel tests: one GPU per test file, buffers from typed arrays, run a list of
 * dispatches in one submission, read a buffer back.
 */
import { openGpu, type GpuContext } from '../../src-main/engine/gpu/device';
import { Step, type Dispatch } from '../../src-main/engine/gpu/ops';
import { readBack } from '../../src-main/engine/gpu/read-back';

let context: Promise<GpuContext> | undefined;

export function testGpu(): Promise<GpuContext> {
  return (context ??= openGpu());
}

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** A storage buffer holding `data` (or `bytes` zero bytes). */
export function buffer(ctx: GpuContext, data: Float32Array | Uint32Array | number, usage = STORAGE()): GPUBuffer {
  const bytes = typeof data === 'number' ? data : data.byteLength;
  const b = ctx.device.createBuffer({ size: Math.max(16, Math.ceil(bytes / 4) * 4), usage });
  if (typeof data !== 'number') ctx.device.queue.writeBuffer(b, 0, data as Uint32Array<ArrayBuffer>);
  return b;
}

export function uniformBuffer(ctx: GpuContext, data: ArrayBuffer | Uint32Array<ArrayBuffer>): GPUBuffer {
  const bytes = data.byteLength;
  const b = ctx.device.createBuffer({
    size: Math.ceil(bytes / 16) * 16,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  ctx.device.queue.writeBuffer(b, 0, data);
  return b;
}

/** A step of `tokens` tokens from position pos0. */
export function makeStep(ctx: GpuContext, pos0: number, tokens: number): Step {
  const step = new Step(ctx.device);
  step.set(pos0, tokens);
  return step;
}

export async function run(ctx: GpuContext, dispatches: Dispatch[]): Promise<void> {
  const encoder = ctx.device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  for (const d of dispatches) d.encode(pass);
  pass.end();
  ctx.device.queue.submit([encoder.finish()]);
  await ctx.device.queue.onSubmittedWorkDone();
}

export async function readF32(ctx: GpuContext, src: GPUBuffer, n: number): Promise<Float32Array> {
  return new Float32Array(await readBack(ctx.device, src, n * 4));
}

export async function readU32(ctx: GpuContext, src: GPUBuffer, n: number): Promise<Uint32Array> {
  return new Uint32Array(await readBack(ctx.device, src, n * 4));
}

/** Largest |a - b| / (|b| + floor) over the arrays: a relative error that tolerates values near zero. */
export function maxRelError(a: ArrayLike<number>, b: ArrayLike<number>, floor = 1e-3): number {
  let worst = 0;
  for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / (Math.abs(b[i]!) + floor));
  return worst;
}

/** Largest absolute error over the largest reference magnitude (attention outputs, whose small values carry no relative meaning). */
export function scaledError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let err = 0;
  let mag = 0;
  for (let i = 0; i < b.length; i++) {
    err = Math.max(err, Math.abs(a[i]! - b[i]!));
    mag = Math.max(mag, Math.abs(b[i]!));
  }
  return err / mag;
}
