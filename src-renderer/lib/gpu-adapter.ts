/** How the UI names the GPU adapter's properties (Settings › About, the chat header's chip). */
import type { GpuAdapter } from '../../src-preload/api';

/** Dawn's backend ids as their APIs are written. */
const BACKEND_NAMES: Record<string, string> = {
  vulkan: 'Vulkan',
  metal: 'Metal',
  d3d12: 'D3D12',
  d3d11: 'D3D11',
  opengl: 'OpenGL',
  opengles: 'OpenGL ES',
};

export function backendLabel(backend: string): string {
  return BACKEND_NAMES[backend.toLowerCase()] ?? backend;
}

/** "yes (size 4)", "yes (sizes 8–64)", or "no". */
export function subgroupsLabel(subgroups: GpuAdapter['subgroups']): string {
  if (!subgroups) return 'no';
  return subgroups.min === subgroups.max
    ? `yes (size ${subgroups.min})`
    : `yes (sizes ${subgroups.min}–${subgroups.max})`;
}

/** What a software adapter is called everywhere in the UI (and by the CLI). */
export const SOFTWARE_GPU = 'software GPU: slow';
