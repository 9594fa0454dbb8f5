/** A model's own GPU buffers (activations, caches, small vectors): created through it, counted, destroyed together. */
const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** A buffer's size for `bytes`: whole words, 16 bytes at least (WebGPU refuses empty bindings). */
export function ownedBufferBytes(bytes: number): number {
  return Math.max(16, Math.ceil(bytes / 4) * 4);
}

export class OwnedBuffers {
  private readonly buffers: GPUBuffer[] = [];

  constructor(private readonly device: GPUDevice) {}

  /** A storage buffer of at least `bytes` (ownedBufferBytes). */
  create(label: string, bytes: number): GPUBuffer {
    const b = this.device.createBuffer({ label, size: ownedBufferBytes(bytes), usage: STORAGE() });
    this.buffers.push(b);
    return b;
  }

  upload(label: string, data: Float32Array): GPUBuffer {
    const b = this.create(label, data.byteLength);
    this.device.queue.writeBuffer(b, 0, data as Float32Array<ArrayBuffer>);
    return b;
  }

  /** Their sizes together. */
  bytes(): number {
    return this.buffers.reduce((sum, b) => sum + b.size, 0);
  }

  destroy(): void {
    for (const b of this.buffers) b.destroy();
  }
}
