/**
 * Weight kernels for the forward pass: y = W·x (mat-vec for decode, mat-mat for prefill) and the
 * embedding row lookup, for every type in weights.ts, decoding W's blocks in registers.
 *
 * Everything is built ahead of the decode loop: pipelines once per (kernel, type), and for each
 * call of matmul()/embedding() a Dispatch with its uniform buffers and bind groups, which the loop
 * only encodes. The token count can change without rebuilding: `setTokens(n)` writes the uniform
 * (queue.writeBuffer) and the next encode() sizes the dispatch for it; call it before encoding a
 * submission, and don't encode one Dispatch with two different counts into the same submission
 * (the last write wins for all of it).
 *
 * Buffers: x, y, ids and out are bound whole (each must be a STORAGE buffer no larger than the
 * binding limit); y/out must not be the buffer bound as x/ids (WebGPU forbids a writable binding
 * aliasing another binding of the same dispatch). Offsets and strides are in elements (f32 or u32).
 */
import type { GpuContext } from './device';
import { shaderSource } from './shader-source';
import type { GpuWeight, GpuWeightPart } from './weights';

export interface Dispatch {
  encode(pass: GPUComputePassEncoder): void;
}

export interface TokenDispatch extends Dispatch {
  /** Tokens the next encode() covers (written to the uniforms now, through the queue). */
  setTokens(n: number): void;
  readonly tokens: number;
}

export interface MatmulOptions {
  /** Element offset of token 0's vector in x (default 0). */
  xOffset?: number;
  /** Element offset of token 0's output in y (default 0). */
  yOffset?: number;
  /** Elements between consecutive tokens in x (default: cols). */
  xStride?: number;
  /** Elements between consecutive tokens in y (default: rows). */
  yStride?: number;
  /** y += W·x instead of y = W·x (e.g. the residual add after attn_output / ffn_down). */
  accumulate?: boolean;
}

export interface EmbeddingOptions {
  /** Index of the first id in `ids` (default 0). */
  idsOffset?: number;
  /** Element offset of token 0's row in out (default 0). */
  outOffset?: number;
  /** Elements between consecutive tokens' rows in out (default: cols). */
  outStride?: number;
}

export interface KernelOptions {
  /**
   * Use subgroup reductions where the device has them (the `subgroups` feature and WGSL's
   * `subgroup_id`; default true); false forces the shared-memory path.
   */
  subgroups?: boolean;
}

/** Threads per workgroup of the matmul kernels. */
const MATMUL_WG = 64;
/** Rows per workgroup and tokens per workgroup of the two matmul variants. */
const MATVEC = { rows: 2, tokens: 1 } as const;
const MATMAT = { rows: 4, tokens: 8 } as const;
const EMBED_WG = 64;
/** Workgroups per dimension used before wrapping into y (WebGPU guarantees 65535). */
const MAX_GROUPS_X = 32768;
/** Params (shaders/quant/common.wgsl): 12 u32. */
const PARAMS_BYTES = 48;
const PARAM_N = 2; // index of `n` in Params

/** matvec (one token) or matmat (token tiles); "4": x read as vec4; "+": accumulate into y. */
type Variant = `${'matvec' | 'matmat'}${'' | '4'}${'' | '+'}` | 'embedding';

/** One part of a weight, bound: its bind group and its Params uniform. */
interface BoundPart {
  part: GpuWeightPart;
  group: GPUBindGroup;
  uniform: GPUBuffer;
}

export class MatmulKernels {
  readonly subgroups: boolean;
  private readonly device: GPUDevice;
  private readonly layout: GPUBindGroupLayout;
  private readonly pipelineLayout: GPUPipelineLayout;
  private readonly pipelines = new Map<string, GPUComputePipeline>();

  constructor(ctx: GpuContext, options: KernelOptions = {}) {
    this.device = ctx.device;
    this.subgroups = ctx.hasSubgroups && ctx.info.wgslLanguageFeatures.includes('subgroup_id') && (options.subgroups ?? true);
    this.layout = this.device.createBindGroupLayout({
      label: 'weight kernel',
      entries: [
        { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
        { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
        { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
        { binding: 3, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
      ],
    });
    this.pipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [this.layout] });
  }

  /** The WGSL of one kernel variant for one type (for tests and debugging). */
  source(variant: Variant, typeName: string): string {
    const type = typeName.toLowerCase();
    if (variant === 'embedding') return shaderSource('embedding.wgsl', { TYPE: type, WG: EMBED_WG });
    const v = variant.startsWith('matvec') ? MATVEC : MATMAT;
    return shaderSource('matmul.wgsl', {
      TYPE: type, WG: MATMUL_WG, ROWS: v.rows, TT: v.tokens, SUBGROUPS: this.subgroups,
      X_VEC4: variant.includes('4'), ACCUMULATE: variant.endsWith('+'),
    });
  }

  private pipeline(variant: Variant, typeName: string): GPUComputePipeline {
    const key = `${variant}:${typeName}`;
    let p = this.pipelines.get(key);
    if (!p) {
      const module = this.device.createShaderModule({ label: key, code: this.source(variant, typeName) });
      p = this.device.createComputePipeline({ label: key, layout: this.pipelineLayout, compute: { module, entryPoint: 'main' } });
      this.pipelines.set(key, p);
    }
    return p;
  }

  /** Compiles the pipelines of these types ahead of time (asynchronously, in parallel). */
  async prepare(typeNames: Iterable<string>): Promise<void> {
    const jobs: Promise<void>[] = [];
    for (const typeName of new Set(typeNames)) {
      for (const variant of ['matvec4', 'matmat4', 'embedding'] as const) {
        const key = `${variant}:${typeName}`;
        if (this.pipelines.has(key)) continue;
        const module = this.device.createShaderModule({ label: key, code: this.source(variant, typeName) });
        jobs.push(
          this.device
            .createComputePipelineAsync({ label: key, layout: this.pipelineLayout, compute: { module, entryPoint: 'main' } })
            .then((p) => void this.pipelines.set(key, p)),
        );
      }
    }
    await Promise.all(jobs);
  }

  /**
   * y = W·x for n tokens: W is [rows × cols]; x holds n vectors of cols f32 (token t at element
   * xOffset + t·xStride); y receives n vectors of rows f32 (token t at yOffset + t·yStride).
   */
  matmul(weight: GpuWeight, x: GPUBuffer, y: GPUBuffer, n: number, options: MatmulOptions = {}): TokenDispatch {
    const typeName = weight.type.name;
    const params = (part: GpuWeightPart) => [
      part.rows,
      weight.cols,
      n,
      Math.ceil(weight.cols / 32),
      weight.cols / weight.type.blockSize,
      part.scaleWord,
      options.xOffset ?? 0,
      options.yOffset ?? 0,
      options.yStride ?? weight.rows,
      part.rowStart,
      weight.rows,
      options.xStride ?? weight.cols,
    ];
    const bound = this.bindParts(weight, x, y, params);
    // x read as vec4s when every token vector starts on a 16-byte boundary and is whole vec4s long.
    const xStride = options.xStride ?? weight.cols;
    const vec4 = (options.xOffset ?? 0) % 4 === 0 && xStride % 4 === 0 && weight.cols % 4 === 0;
    const variant = (tokens: number): Variant =>
      `${tokens === 1 ? 'matvec' : 'matmat'}${vec4 ? '4' : ''}${options.accumulate ? '+' : ''}`;
    // Both variants built now, not in the loop (setTokens may switch between them).
    this.pipeline(variant(1), typeName);
    this.pipeline(variant(2), typeName);
    return this.tokenDispatch(bound, n, (pass, tokens) => {
      const v = tokens === 1 ? MATVEC : MATMAT;
      pass.setPipeline(this.pipeline(variant(tokens), typeName));
      for (const b of bound) {
        const groups = Math.ceil(b.part.rows / v.rows);
        if (groups === 0) continue;
        pass.setBindGroup(0, b.group);
        const gx = Math.min(groups, MAX_GROUPS_X);
        pass.dispatchWorkgroups(gx, Math.ceil(groups / gx), Math.ceil(tokens / v.tokens));
      }
    });
  }

  /** out[t] = row ids[t] of W ([vocab rows × cols]) as f32, for n ids (u32 in `ids`). Ids past the table give zeros. */
  embedding(weight: GpuWeight, ids: GPUBuffer, out: GPUBuffer, n: number, options: EmbeddingOptions = {}): TokenDispatch {
    const typeName = weight.type.name;
    const units = Math.ceil(weight.cols / 32);
    const params = (part: GpuWeightPart) => [
      part.rows,
      weight.cols,
      n,
      units,
      weight.cols / weight.type.blockSize,
      part.scaleWord,
      options.idsOffset ?? 0,
      options.outOffset ?? 0,
      options.outStride ?? weight.cols,
      part.rowStart,
      weight.rows,
      0,
    ];
    const bound = this.bindParts(weight, ids, out, params);
    this.pipeline('embedding', typeName);
    return this.tokenDispatch(bound, n, (pass, tokens) => {
      pass.setPipeline(this.pipeline('embedding', typeName));
      for (const b of bound) {
        pass.setBindGroup(0, b.group);
        pass.dispatchWorkgroups(Math.ceil(units / EMBED_WG), tokens);
      }
    });
  }

  /**
   * The TokenDispatch over `bound` starting at n tokens: setTokens() writes the count into every
   * part's uniform; encode() does nothing at 0 tokens, else hands the current count to `encode`.
   */
  private tokenDispatch(
    bound: readonly BoundPart[],
    n: number,
    encode: (pass: GPUComputePassEncoder, tokens: number) => void,
  ): TokenDispatch {
    const device = this.device;
    let tokens = n;
    const word = new Uint32Array(1);
    return {
      get tokens() {
        return tokens;
      },
      setTokens(count: number) {
        tokens = count;
        word[0] = count;
        for (const b of bound) device.queue.writeBuffer(b.uniform, PARAM_N * 4, word);
      },
      encode(pass) {
        if (tokens === 0) return;
        encode(pass, tokens);
      },
    };
  }

  private bindParts(
    weight: GpuWeight,
    input: GPUBuffer,
    output: GPUBuffer,
    params: (part: GpuWeightPart) => number[],
  ): BoundPart[] {
    return weight.parts.map((part, i) => {
      const uniform = this.device.createBuffer({
        label: `${weight.name}#${i} params`,
        size: PARAMS_BYTES,
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
        mappedAtCreation: true,
      });
      new Uint32Array(uniform.getMappedRange()).set(params(part));
      uniform.unmap();
      const group = this.device.createBindGroup({
        label: `${weight.name}#${i}`,
        layout: this.layout,
        entries: [
          { binding: 0, resource: { buffer: part.buffer } },
          { binding: 1, resource: { buffer: input } },
          { binding: 2, resource: { buffer: output } },
          { binding: 3, resource: { buffer: uniform } },
        ],
      });
      return { part, group, uniform };
    });
  }
}
