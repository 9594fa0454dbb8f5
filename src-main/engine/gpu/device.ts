/**
 * The engine's WebGPU device, through Dawn (the `webgpu` npm package). Asks for the features
 * the kernels can use when the adapter has them (shader-f16, subgroups, timestamp-query) and
 * for the adapter's own limits, and says what it got.
 */
import { existsSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { SWIFTSHADER_ICD } from './software-driver';

export interface GpuInfo {
  /** Adapter name as the driver reports it ("NVIDIA GeForce RTX 4090", "SwiftShader Device"). */
  readonly name: string;
  readonly vendor: string;
  readonly architecture: string;
  /** "vulkan", "metal", "d3d12", ... */
  readonly backend: string;
  readonly features: readonly string[];
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
}

export interface GpuContext {
  readonly device: GPUDevice;
  readonly info: GpuInfo;
  readonly hasF16: boolean;
  readonly hasSubgroups: boolean;
  readonly hasTimestamps: boolean;
  destroy(): void;
}

const WANTED_FEATURES = ['shader-f16', 'subgroups', 'timestamp-query'] as const;

export class NoGpuError extends Error {
  override readonly name = 'NoGpuError';
}

let installedGlobals = false;

function dawnOptions(adapterName: string | undefined): string[] {
  return adapterName ? [`adapter=${adapterName}`] : [];
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
  let gpu: GPU | undefined = create(dawnOptions(adapterName));
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) {
    gpu = undefined;
    const hint = existsSync(SWIFTSHADER_ICD)
      ? `, or use the software driver: VK_ICD_FILENAMES=${SWIFTSHADER_ICD}`
      : ' (Debian/Ubuntu: apt install libvulkan1 mesa-vulkan-drivers; or chromium for its SwiftShader driver)';
    throw new NoGpuError(
      `no WebGPU adapter found${adapterName ? ` named "${adapterName}"` : ''}: install your GPU's Vulkan (Linux/Windows) or Metal (macOS) driver${hint}`,
    );
  }
  const features = WANTED_FEATURES.filter((f) => adapter.features.has(f));
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
  return {
    device,
    info: {
      name: info.description || info.device || 'unknown adapter',
      vendor: info.vendor,
      architecture: info.architecture,
      backend: (info as GPUAdapterInfo & { backendType?: string }).backendType ?? 'unknown',
      features,
      maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize,
      maxBufferSize: device.limits.maxBufferSize,
    },
    hasF16: features.includes('shader-f16'),
    hasSubgroups: features.includes('subgroups'),
    hasTimestamps: features.includes('timestamp-query'),
    destroy() {
      device.destroy();
      // Dawn keeps the process alive while its GPU object is referenced.
      gpu = undefined;
    },
  };
}
