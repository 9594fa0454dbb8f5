import { describe, expect, it } from 'vitest';
import { backendLabel, subgroupsLabel } from '../../src-renderer/lib/gpu-adapter';

describe('GPU adapter labels', () => {
  it('names backends as their APIs are written', () => {
    expect(['vulkan', 'metal', 'd3d12', 'opengles'].map(backendLabel)).toEqual([
      'Vulkan',
      'Metal',
      'D3D12',
      'OpenGL ES',
    ]);
    expect(backendLabel('webgpu-next')).toBe('webgpu-next');
  });

  it('says the subgroup size, or a range of sizes, or no', () => {
    expect(subgroupsLabel({ min: 4, max: 4 })).toBe('yes (size 4)');
    expect(subgroupsLabel({ min: 8, max: 64 })).toBe('yes (sizes 8–64)');
    expect(subgroupsLabel(null)).toBe('no');
  });
});
