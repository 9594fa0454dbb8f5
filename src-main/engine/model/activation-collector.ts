/**
 * Importance-matrix collection, as llama-imatrix's callback (llama.cpp's cb()): the forward pass
 * marks each matmul input with `point()`, and while `active` each point adds the squares (and
 * values) of its input's columns to sums on the GPU, per expert where routed. `take()` reads and
 * zeroes them. The points cost nothing while collection is off.
 */
import type { CollectedWeight } from '../../core/imatrix';
import type { Dispatch, OpKernels, Step } from '../gpu/ops';
import type { ExpertRoute } from './moe-ffn';
import type { OwnedBuffers } from './owned-buffers';

/** A matmul input whose columns the importance matrix sums: shared by the weights that read it. */
interface CollectPoint {
  weights: string[];
  x: GPUBuffer;
  width: number;
  /** Elements between the input's rows. */
  stride: number;
  /** Stacked experts: the sums are per expert, over the rows routed to each. */
  route?: ExpertRoute;
}

/** A collect point's sums on the GPU: Σ x² then Σ x, [matrix][column] each, f32; counts (u32, per expert) where routed. */
interface CollectBuffers {
  sums: GPUBuffer;
  counts?: GPUBuffer;
}

export class ActivationCollector {
  /** While set, every point adds its input to its sums. */
  active = false;
  private readonly points: CollectPoint[] = [];
  /** The buffers and dispatches of each point, made on first use; the tokens the unrouted points saw. */
  private collection: { buffers: CollectBuffers[]; dispatches: Dispatch[]; tokens: number } | null = null;

  constructor(
    private readonly device: GPUDevice,
    private readonly ops: OpKernels,
    private readonly step: Step,
    private readonly owned: OwnedBuffers,
  ) {}

  /** A body step that, while active, adds the squares (and values) of `x`, the input of `weights`, to their sums; per expert with `route`. */
  point(weights: string[], x: GPUBuffer, width: number, stride = width, route?: ExpertRoute): Dispatch {
    const index = this.points.push({ weights, x, width, stride, route }) - 1;
    return { encode: (pass) => (this.active ? this.started().dispatches[index]!.encode(pass) : undefined) };
  }

  /** Counts a batch's tokens into the unrouted points' totals (once per batch, while active). */
  countTokens(tokens: number): void {
    if (this.active) this.started().tokens += tokens;
  }

  /** The sums collected since the last call (then zeroed), per weight matrix of the points. */
  async take(): Promise<CollectedWeight[]> {
    const c = this.started();
    const all = c.buffers.flatMap((b) => (b.counts ? [b.sums, b.counts] : [b.sums]));
    const staging = this.device.createBuffer({
      size: all.reduce((sum, b) => sum + b.size, 0),
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    const encoder = this.device.createCommandEncoder();
    let at = 0;
    for (const b of all) {
      encoder.copyBufferToBuffer(b, 0, staging, at, b.size);
      encoder.clearBuffer(b);
      at += b.size;
    }
    this.device.queue.submit([encoder.finish()]);
    try {
      await staging.mapAsync(GPUMapMode.READ);
      const bytes = staging.getMappedRange().slice(0);
      const out: CollectedWeight[] = [];
      at = 0;
      this.points.forEach((point, i) => {
        const { sums, counts } = c.buffers[i]!;
        const values = point.width * (point.route?.experts ?? 1);
        const both = new Float32Array(bytes, at, 2 * values);
        at += sums.size;
        const seen = counts ? Array.from(new Uint32Array(bytes, at, point.route!.experts)) : [c.tokens];
        at += counts?.size ?? 0;
        for (const weight of point.weights)
          out.push({ weight, sums: both.slice(0, values), inSums: both.slice(values), counts: seen });
      });
      c.tokens = 0;
      return out;
    } finally {
      staging.destroy();
    }
  }

  private started(): NonNullable<ActivationCollector['collection']> {
    if (!this.collection) {
      const buffers = this.points.map((p, i): CollectBuffers => {
        const matrices = p.route?.experts ?? 1;
        const sums = this.owned.create(`activation sums ${i}`, 2 * matrices * p.width * 4);
        return { sums, counts: p.route ? this.owned.create(`activation counts ${i}`, matrices * 4) : undefined };
      });
      const dispatches = this.points.map((p, i) => {
        const { sums, counts } = buffers[i]!;
        if (!p.route || !counts) return this.ops.squareSums(p.x, sums, p.width, this.step, p.stride);
        return this.ops.squareSumsMoe({
          ...p.route,
          x: p.x,
          sums,
          counts,
          step: this.step,
          width: p.width,
          stride: p.stride,
        });
      });
      this.collection = { buffers, dispatches, tokens: 0 };
    }
    return this.collection;
  }
}
