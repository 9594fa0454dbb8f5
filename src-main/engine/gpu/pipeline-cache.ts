/**
 * Compute pipelines kept for the life of a device, so that loading a model again (or another
 * model with the same types) reuses what an earlier load compiled. On lavapipe and SwiftShader a
 * K-quant kernel takes seconds to compile, and each loaded model has kernels of its own (ops.ts,
 * matmul.ts); without this every load paid for all of them again.
 *
 * A pipeline is keyed by its whole WGSL source, entry point, constants and the name of its layout:
 * pipeline layouts made from equal descriptors are interchangeable in WebGPU (group-equivalent),
 * so a pipeline compiled against one kernel set's layout binds another's bind groups.
 */
export interface PipelineRequest {
  label: string;
  code: string;
  entryPoint: string;
  /** An explicit layout, or 'auto' (bind groups then take their layouts from the pipeline). */
  layout: GPUPipelineLayout | 'auto';
  /** Names `layout` in the key ('auto' for the automatic one): equal names, equal descriptors. */
  layoutKey: string;
  constants?: Record<string, number>;
}

export class PipelineCache {
  private readonly modules = new Map<string, GPUShaderModule>();
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  /** Pipelines compiled so far (cache misses): what a reload should leave unchanged. */
  compiled = 0;

  constructor(private readonly device: GPUDevice) {}

  /** The pipeline for `r`, compiled now if no earlier request compiled it. */
  get(r: PipelineRequest): GPUComputePipeline {
    const key = pipelineKey(r);
    let p = this.pipelines.get(key);
    if (!p) {
      p = this.device.createComputePipeline(this.descriptor(r));
      this.compiled++;
      this.pipelines.set(key, p);
    }
    return p;
  }

  private descriptor(r: PipelineRequest): GPUComputePipelineDescriptor {
    let module = this.modules.get(r.code);
    if (!module) {
      module = this.device.createShaderModule({ label: r.label, code: r.code });
      this.modules.set(r.code, module);
    }
    return {
      label: r.label,
      layout: r.layout,
      compute: { module, entryPoint: r.entryPoint, constants: r.constants ?? {} },
    };
  }
}

function pipelineKey(r: PipelineRequest): string {
  return `${r.layoutKey}\n${r.entryPoint}\n${JSON.stringify(r.constants ?? {})}\n${r.code}`;
}

const caches = new WeakMap<GPUDevice, PipelineCache>();

/** The device's one pipeline cache. */
export function pipelineCache(device: GPUDevice): PipelineCache {
  let cache = caches.get(device);
  if (!cache) {
    cache = new PipelineCache(device);
    caches.set(device, cache);
  }
  return cache;
}
