import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExportTypeOption } from '../../src-preload/api';
import { predictExport } from '../../src-main/core/export-size';
import { GGML_TYPES } from '../../src-main/core/ggml-types';
import { tensorNeedsImatrix } from '../../src-main/core/quant-recipes';
import { hasEncoder } from '../../src-main/core/quants/encoders';
import { recipeJson, resolveOverrides } from '../../src-main/core/recipe-overrides';
import { recipeTypes } from '../../src-main/core/recipe-types';
import { openGguf } from '../../src-main/node/gguf-io';
import { readModelFile } from '../../src-main/node/model-file';
import { describeImatrix } from '../../src-renderer/lib/export-imatrix.svelte';
import {
  layerRangeScope,
  parseLayerRange,
  predictedQualityText,
  RECIPE_ROLES,
  recipeFromChoices,
  recipeRefusal,
  roleTypeGroups,
  rolePattern,
  typesNeedingImatrix,
  typesWithoutImatrix,
  type RecipeRole,
} from '../../src-renderer/lib/export-recipe';
import { testBackend } from '../support/backend';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

describe('export recipe editor', () => {
  it('turns role choices into tensor-type patterns, over every layer or a range', () => {
    expect(recipeFromChoices({}, null)).toBeUndefined();
    expect(recipeFromChoices({ attn_v: 'Q8_0', output: 'Q6_K' }, { first: 1, last: 3 })).toEqual({
      tensorTypes: [
        { pattern: '^blk\\.(?:1|2|3)\\.attn_v(?:_exps|_shexp)?\\.weight$', type: 'Q8_0' },
        { pattern: '^output\\.weight$', type: 'Q6_K' },
      ],
    });
    const all = new RegExp(rolePattern('ffn_down', null));
    expect(['blk.0.ffn_down.weight', 'blk.11.ffn_down_exps.weight'].every((n) => all.test(n))).toBe(true);
    expect(all.test('blk.0.ffn_down_norm.weight')).toBe(false);
    const some = new RegExp(rolePattern('attn_q', { first: 2, last: 2 }));
    expect(some.test('blk.2.attn_q.weight')).toBe(true);
    expect(some.test('blk.12.attn_q.weight')).toBe(false);
  });

  it('reads a layer range, with errors for ranges that are not', () => {
    expect(parseLayerRange('', '', 5)).toBeNull();
    expect(parseLayerRange('1', '', 5)).toEqual({ first: 1, last: 4 });
    expect(parseLayerRange('3', '1', 5)).toBe('Layers: give a first and a last layer, first ≤ last.');
    expect(parseLayerRange('0', '5', 5)).toBe('Layers: this model has layers 0 to 4.');
  });
});

describe('recipe prediction and importance matrix lines', () => {
  it('says the predicted quality, or what it waits for', () => {
    const p = { elements: 100, sampledElements: 50, rmse: 0.01, relativeError: 0.03242, snrDb: 29.78 };
    expect(predictedQualityText(p)).toBe('predicted error 3.242% · SNR 29.8 dB');
    expect(predictedQualityText({ ...p, snrDb: null })).toBe('predicted error 3.242%');
    expect(predictedQualityText(null)).toBe('predicted quality: once each type’s quality has been measured');
  });

  it('says what an importance matrix was computed from', () => {
    const view = {
      modelId: 1,
      path: '/d/m.imatrix.gguf',
      label: 'built-in text v1',
      entries: 35,
      chunks: 2,
      chunkSize: 283,
      cached: false,
    };
    expect(describeImatrix(view)).toBe('built-in text v1: 35 matrices from 2 chunks of 283 tokens');
    expect(describeImatrix({ ...view, cached: true })).toBe(
      'built-in text v1: 35 matrices from 2 chunks of 283 tokens (computed before, reused)',
    );
    expect(describeImatrix({ ...view, label: '/m.dat', chunks: null, chunkSize: null })).toBe('/m.dat: 35 matrices');
  });
});

/** A tensor each role sets, as a Q4_K_M file names it. */
const ROLE_TENSOR: Record<'layer' | 'output' | 'token_embd', string> = {
  layer: 'blk.0.ffn_down.weight',
  output: 'output.weight',
  token_embd: 'token_embd.weight',
};

/** What core says a tensor can be written as (types with an encoder), split by whether it needs an importance matrix. */
function coreTypes(tensor: string): { without: string[]; needing: string[] } {
  const writable = GGML_TYPES.filter(hasEncoder);
  const names = (needs: boolean) =>
    writable
      .filter((t) => tensorNeedsImatrix('Q4_K_M', tensor, t) === needs)
      .map((t) => t.name)
      .sort();
  return { without: names(false), needing: names(true) };
}

const sorted = (types: readonly string[]) => [...types].sort();

/** A model with 256-wide rows (every type's blocks fit, nothing falls back). */
async function wideModel(): Promise<string> {
  const path = join(tempDir(), 'wide.gguf');
  await writeRandomModel(path, { nLayer: 2, nEmbd: 256, nFf: 512, nHead: 4, nHeadKv: 2 });
  return path;
}

/** What the back end sends (ExportPlanView.recipeTypes). */
const types = recipeTypes();

describe('the types the recipe editor offers', () => {
  it('are every type core writes for the role, those needing an importance matrix apart, most bits first, sent with the plan', async () => {
    for (const role of RECIPE_ROLES) {
      const tensor = ROLE_TENSOR[role === 'output' || role === 'token_embd' ? role : 'layer'];
      const core = coreTypes(tensor);
      expect(sorted(typesWithoutImatrix(role, types)), `${role} (${tensor}) without an importance matrix`).toEqual(
        core.without,
      );
      expect(sorted(typesNeedingImatrix(role, types)), `${role} (${tensor}) with one`).toEqual(core.needing);
      for (const list of [typesWithoutImatrix(role, types), typesNeedingImatrix(role, types)]) {
        const bits = list.map((name) => {
          const t = GGML_TYPES.find((g) => g.name === name)!;
          return (8 * t.typeSize) / t.blockSize;
        });
        expect(bits, `${role}: most bits first`).toEqual([...bits].sort((a, b) => b - a));
      }
    }
    // The editor's list, the way core's checks see it: BF16, F32 and IQ3_S are among them.
    expect(typesWithoutImatrix('attn_v', types)).toEqual(expect.arrayContaining(['F32', 'BF16', 'IQ3_S']));
    expect(typesNeedingImatrix('attn_v', types)).toContain('IQ2_XS');
    // The back end's plan carries them.
    const b = testBackend();
    const modelId = b.context.models.upsert(readModelFile(await wideModel(), 'added')).id;
    expect((await b.api.exportPlan(modelId)).recipeTypes).toEqual(types);
  });

  it('offers the types that need an importance matrix as a labelled group once one is chosen, or while a role holds one', () => {
    expect(roleTypeGroups('ffn_down', types, false, undefined)).toEqual([
      { label: null, types: typesWithoutImatrix('ffn_down', types) },
    ]);
    const withMatrix = [
      { label: null, types: typesWithoutImatrix('ffn_down', types) },
      { label: 'needs the importance matrix', types: typesNeedingImatrix('ffn_down', types) },
    ];
    expect(roleTypeGroups('ffn_down', types, true, undefined)).toEqual(withMatrix);
    // The matrix cleared: the role's choice stays visible (the refusal below says why it cannot go ahead).
    expect(roleTypeGroups('ffn_down', types, false, 'IQ2_XS')).toEqual(withMatrix);
    expect(roleTypeGroups('ffn_down', types, false, 'Q8_0')).toEqual([
      { label: null, types: typesWithoutImatrix('ffn_down', types) },
    ]);
  });

  it('each round-trips through the parsing of the export request and plans a Q4_K_M export', async () => {
    const { gguf, file } = openGguf(await wideModel());
    try {
      for (const role of RECIPE_ROLES) {
        for (const [offered, imatrixEntries] of [
          [typesWithoutImatrix(role, types), undefined],
          [typesNeedingImatrix(role, types), 1],
        ] as const) {
          for (const type of offered) {
            const recipe = recipeFromChoices({ [role]: type }, null)!;
            const resolved = resolveOverrides(recipe);
            expect(
              (JSON.parse(recipeJson('Q4_K_M', resolved)!) as typeof recipe).tensorTypes,
              `${role}=${type}`,
            ).toEqual(recipe.tensorTypes);
            const plan = predictExport(gguf, 'Q4_K_M', { ...resolved, imatrixEntries });
            expect(plan.unsupported, `${role}=${type}`).toBeNull();
            expect(
              plan.outputTypes.map((t) => t.type),
              `${role}=${type}`,
            ).toContain(type);
          }
        }
      }
    } finally {
      file.close();
    }
  });
});

describe('a recipe that needs the importance matrix once it is cleared', () => {
  it('says which roles stop the chosen type, from the back end’s plan', async () => {
    const b = testBackend();
    const modelId = b.context.models.upsert(readModelFile(await wideModel(), 'added')).id;
    const choices: Partial<Record<RecipeRole, string>> = { attn_v: 'IQ2_XS', ffn_up: 'Q8_0' };
    const plan = await b.api.exportPlan(modelId, { recipe: recipeFromChoices(choices, null) });
    const q4 = plan.options.find((o) => o.fileType === 'Q4_K_M')!;
    expect(recipeRefusal(q4, choices, false, plan.recipeTypes)).toBe(
      'Q4_K_M cannot be exported with this recipe: attn_v is IQ2_XS, which needs an importance matrix. ' +
        'Choose one under “Importance matrix”, or another type for attn_v.',
    );
    // Without the recipe's help: the back end's own words.
    const other: ExportTypeOption = {
      ...q4,
      needsImatrix: false,
      unavailable: 're-quantizes 3 already-quantized tensors',
    };
    expect(recipeRefusal(other, choices, false, plan.recipeTypes)).toBe(
      'Q4_K_M cannot be exported: re-quantizes 3 already-quantized tensors',
    );
    const fine = (
      await b.api.exportPlan(modelId, { recipe: recipeFromChoices({ ffn_up: 'Q8_0' }, null) })
    ).options.find((o) => o.fileType === 'Q4_K_M')!;
    expect(recipeRefusal(fine, choices, true, plan.recipeTypes)).toBeNull();
  });
});

describe("the recipe's layer range", () => {
  it('names the overrides it limits: the chosen roles inside the layers', () => {
    expect(layerRangeScope({ attn_v: 'Q8_0', output: 'Q6_K', ffn_down: 'Q4_K' })).toBe('Layers of attn_v, ffn_down');
    expect(layerRangeScope({ output: 'Q6_K' })).toBe('Layers of the layer overrides');
  });
});
