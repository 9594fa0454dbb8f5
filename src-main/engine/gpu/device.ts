/**
 * The engine's WebGPU device, through Dawn (the `webgpu` npm package). Asks for the features
 * the kernels can use when the adapter has them (shader-f16, subgroups, timestamp-query) and
 * for the adapter's own limits, and says what it got.
 */
import { create, globals } from 'webgpu';
import type { GpuInfo } from '../../engine-wire/protocol';
import { pacesWaits } from './paced-wait';
import { installedSoftwareIcd, vulkanDriversChosen } from './software-driver';

export interface GpuContext {
  readonly device: GPUDevice;
  readonly info: GpuInfo;
  readonly hasF16: boolean;
  readonly hasSubgroups: boolean;
  readonly hasTimestamps: boolean;
  /** Whether waits for the queue sleep before they poll (paced-wait.ts): CPU adapters. */
  readonly pacesWaits: boolean;
  destroy(): void;
}

/** The limits a buffer must keep to: one binding, one buffer. */
export type BufferLimits = Pick<GPUSupportedLimits, 'maxStorageBufferBindingSize' | 'maxBufferSize'>;

/** What planning a load reads of a GPU (a GpuContext is one): its buffer limits and its name. */
export interface GpuTarget {
  readonly device: { readonly limits: BufferLimits };
  readonly info: { readonly name: string };
}

const WANTED_FEATURES = ['shader-f16', 'subgroups', 'timestamp-query'] as const;

export class NoGpuError extends Error {
  override readonly name = 'NoGpuError';
}

let installedGlobals = false;

/** Dawn's backends (its `backend=` option). */
const BACKENDS = ['d3d11', 'd3d12', 'metal', 'vulkan', 'opengl', 'opengles'] as const;

/** The backend Dawn picks when none is named: the platform's native API. */
function defaultBackend(): string {
  return process.platform === 'darwin' ? 'metal' : process.platform === 'win32' ? 'd3d12' : 'vulkan';
}

function requestedBackend(): string | undefined {
  const b = process.env.GUFO_BACKEND?.toLowerCase();
  if (!b) return undefined;
  if (!(BACKENDS as readonly string[]).includes(b)) {
    throw new NoGpuError(`GUFO_BACKEND=${process.env.GUFO_BACKEND} is not one of ${BACKENDS.join(', ')}`);
  }
  return b;
}

/**
 * GUFO_KERNEL_SHAPE=gpu|cpu: the kernel shapes to use whatever the adapter (for tests: a software
 * adapter runs the GPU's shapes, shader-f16 and subgroups included, as a GPU user's machine would);
 * unset: the CPU's on a fallback adapter, else the GPU's.
 */
function requestedKernelShape(): 'gpu' | 'cpu' | undefined {
  const s = process.env.GUFO_KERNEL_SHAPE?.toLowerCase();
  if (!s) return undefined;
  if (s !== 'gpu' && s !== 'cpu')
    throw new NoGpuError(`GUFO_KERNEL_SHAPE=${process.env.GUFO_KERNEL_SHAPE} is not gpu or cpu`);
  return s;
}

/** GUFO_SUBGROUPS=0: the device is opened without the subgroups feature, so every kernel takes its path without them. */
function subgroupsAllowed(): boolean {
  const s = process.env.GUFO_SUBGROUPS;
  if (s === undefined || s === '' || s === '1') return true;
  if (s === '0') return false;
  throw new NoGpuError(`GUFO_SUBGROUPS=${s} is not 0 or 1`);
}

/**
 * Dawn rounds timestamps down to 64 µs by default (a browser's guard against timing attacks):
 * too coarse for `gufo bench --profile`, which times kernels of a few microseconds.
 */
const FULL_TIMESTAMPS = 'disable-dawn-features=timestamp_quantization';

/**
 * WebGPU zero-fills a kernel's workgroup memory before it runs, so that a web page cannot read
 * what another left there. Gufo runs only its own kernels, each of which writes its workgroup
 * memory before reading it, so the fill is pure cost, above all in compilation: it is about a third
 * of the CPU time of a first load on SwiftShader (`npm run bench -- compile`, docs/engine.md).
 * Bounds checks (robustness) stay on. GUFO_WORKGROUP_ZERO_FILL=1 keeps the fill (the bench's reference).
 */
function workgroupZeroFill(): string[] {
  return process.env.GUFO_WORKGROUP_ZERO_FILL === '1' ? [] : ['enable-dawn-features=disable_workgroup_init'];
}

function dawnOptions(adapterName: string | undefined, backend: string | undefined): string[] {
  return [
    ...(adapterName ? [`adapter=${adapterName}`] : []),
    ...(backend ? [`backend=${backend}`] : []),
    FULL_TIMESTAMPS,
    ...workgroupZeroFill(),
  ];
}

/**
 * Opens the GPU. `adapterName` (or GUFO_ADAPTER) picks an adapter by the name Dawn lists;
 * otherwise the high-performance one. Without any adapter: a NoGpuError saying what to install.
 */
export async function openGpu(adapterName = process.env.GUFO_ADAPTER): Promise<GpuContext> {
  if (!installedGlobals) {
    // GPUBufferUsage, GPUMapMode, ... as in a browser.
    Object.assign(globalThis, globals);
    installedGlobals = true;
  }
  const backend = requestedBackend();
  const kernelShape = requestedKernelShape();
  const allowSubgroups = subgroupsAllowed();
  let gpu: GPU | undefined = create(dawnOptions(adapterName, backend));
  let adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  const softwareIcd =
    adapter || vulkanDriversChosen() || (backend ?? defaultBackend()) !== 'vulkan' ? undefined : installedSoftwareIcd();
  if (softwareIcd) {
    // No hardware driver answered: the Vulkan loader reads VK_ICD_FILENAMES when Dawn makes its next instance.
    process.env.VK_ICD_FILENAMES = softwareIcd;
    gpu = create(dawnOptions(adapterName, backend));
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  }
  if (!adapter) {
    gpu = undefined;
    throw new NoGpuError(
      `no WebGPU adapter found${adapterName ? ` named "${adapterName}"` : ''}: install your GPU's Vulkan (Linux/Windows) or Metal (macOS) driver` +
        ' (Debian/Ubuntu: apt install libvulkan1 mesa-vulkan-drivers, which brings the lavapipe software driver; or chromium for its SwiftShader driver)',
    );
  }
  const features = WANTED_FEATURES.filter((f) => adapter.features.has(f) && (f !== 'subgroups' || allowSubgroups));
  const limits = adapter.limits;
  const device = await adapter.requestDevice({
    requiredFeatures: features,
    requiredLimits: {
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
      maxBufferSize: limits.maxBufferSize,
      maxStorageBuffersPerShaderStage: limits.maxStorageBuffersPerShaderStage,
      maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: limits.maxComputeWorkgroupSizeX,
      maxComputeWorkgroupsPerDimension: limits.maxComputeWorkgroupsPerDimension,
    },
  });
  const info = adapter.info;
  const isFallbackAdapter = (info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter ?? false;
  return {
    device,
    info: {
      name: info.description || info.device || 'unknown adapter',
      vendor: info.vendor,
      architecture: info.architecture,
      // Dawn's node binding does not expose the backend it chose; without GUFO_BACKEND it is the platform's default.
      backend: (info as GPUAdapterInfo & { backendType?: string }).backendType ?? backend ?? defaultBackend(),
      isFallbackAdapter,
      cpuShapes: kernelShape ? kernelShape === 'cpu' : isFallbackAdapter,
      subgroupMinSize: (info as GPUAdapterInfo & { subgroupMinSize?: number }).subgroupMinSize ?? 0,
      subgroupMaxSize: (info as GPUAdapterInfo & { subgroupMaxSize?: number }).subgroupMaxSize ?? 0,
      wgslLanguageFeatures: [...(gpu.wgslLanguageFeatures ?? [])],
      features,
      maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize,
      maxBufferSize: device.limits.maxBufferSize,
    },
    hasF16: features.includes('shader-f16'),
    hasSubgroups: features.includes('subgroups'),
    hasTimestamps: features.includes('timestamp-query'),
    pacesWaits: pacesWaits(isFallbackAdapter),
    destroy() {
      device.destroy();
      // Dawn keeps the process alive while its GPU object is referenced.
      gpu = undefined;
    },
  };
}
