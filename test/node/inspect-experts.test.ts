/**
 * The inspector on mixture-of-experts files: each layer's expert tensors (stacked [cols, rows,
 * experts]), router and shared expert appear in the layer map in data-flow order with their
 * types, and the tensor list gives their full 3-D shapes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layerMap, listTensors } from '../../src-main/node/inspect/tensor-table';
import { openGguf } from '../../src-main/node/gguf-io';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

async function inspect(shape: Parameters<typeof writeRandomModel>[1]) {
  const path = join(tempDir(), 'moe.gguf');
  await writeRandomModel(path, shape);
  const { gguf, file } = openGguf(path);
  try {
    return { map: layerMap(gguf), tensors: listTensors(gguf, { layer: 1, search: 'exps' }).tensors };
  } finally {
    file.close();
  }
}

describe('inspector: MoE layers', () => {
  it('qwen2moe: router, stacked experts and the shared expert per layer, with types and shapes', async () => {
    const { map, tensors } = await inspect({
      arch: 'qwen2moe',
      nLayer: 2,
      nEmbd: 64,
      nFf: 128,
      nFfExp: 32,
      nFfShexp: 96,
      nHead: 2,
      nExpert: 4,
      nExpertUsed: 2,
      weightType: 'F16',
    });
    expect(map.roles).toEqual([
      'attn_norm',
      'attn_q',
      'attn_q.bias',
      'attn_k',
      'attn_k.bias',
      'attn_v',
      'attn_v.bias',
      'attn_output',
      'ffn_norm',
      'ffn_gate_inp',
      'ffn_gate_exps',
      'ffn_up_exps',
      'ffn_down_exps',
      'ffn_gate_inp_shexp',
      'ffn_gate_shexp',
      'ffn_up_shexp',
      'ffn_down_shexp',
    ]);
    const cell = (layer: number, role: string) => map.layers[layer]!.cells[map.roles.indexOf(role)];
    expect(cell(1, 'ffn_down_exps')).toEqual({ tensor: 'blk.1.ffn_down_exps.weight', type: 'F16', recipe: null });
    expect(cell(0, 'ffn_gate_inp_shexp')).toEqual({
      tensor: 'blk.0.ffn_gate_inp_shexp.weight',
      type: 'F32',
      recipe: null,
    });
    expect(tensors.map((t) => [t.name, t.shape, t.role, t.layer])).toEqual([
      ['blk.1.ffn_gate_exps.weight', [64, 32, 4], 'ffn_gate_exps', 1],
      ['blk.1.ffn_up_exps.weight', [64, 32, 4], 'ffn_up_exps', 1],
      ['blk.1.ffn_down_exps.weight', [32, 64, 4], 'ffn_down_exps', 1],
    ]);
  });

  it('a merged gate_up expert tensor sits between the up and down experts', async () => {
    const { map } = await inspect({
      arch: 'qwen3moe',
      nLayer: 1,
      nEmbd: 64,
      nFf: 128,
      nHead: 2,
      nExpert: 4,
      nExpertUsed: 2,
      mergedGateUp: true,
    });
    expect(map.roles.slice(map.roles.indexOf('ffn_norm'))).toEqual([
      'ffn_norm',
      'ffn_gate_inp',
      'ffn_gate_up_exps',
      'ffn_down_exps',
    ]);
  });
});
