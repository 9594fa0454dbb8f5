/**
 * The layer map says where a tensor's type is not its file type's recipe (issue #30 item 16):
 * stories260K quantized to Q4_K_M keeps its 64-wide rows out of Q4_K (256-wide blocks), and the
 * map marks each such tensor a fallback, with the row length and the block that did not fit.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { planQuantization } from '../../src-main/core/quant-recipes';
import { openGguf } from '../../src-main/node/gguf-io';
import { layerMap } from '../../src-main/node/inspect/tensor-table';
import { quantizeFile } from '../../src-main/node/quantize';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

function mapOf(path: string) {
  const { gguf, file } = openGguf(path);
  try {
    return layerMap(gguf);
  } finally {
    file.close();
  }
}

describe('layer map: recipe notes', () => {
  it('marks the fallbacks of a Q4_K_M file, and nothing in a file without a recipe', async () => {
    const out = join(tempDir(), 'stories-Q4_K_M.gguf');
    await quantizeFile(STORIES_260K, out, 'Q4_K_M', { overwrite: true });
    const map = mapOf(out);
    expect(map.recipeFileType).toBe('Q4_K_M');
    const cells = [...map.layers.flatMap((l) => l.cells), ...map.other.map((o) => ({ ...o, tensor: o.name }))].filter(
      (c) => c !== null,
    );
    const noted = cells.filter((c) => c.recipe !== null);
    expect(noted.length).toBeGreaterThan(0);
    for (const cell of noted) {
      const recipe = ggmlTypeByName(cell.recipe!.recipeType)!;
      // A fallback: the recipe's type has blocks wider than the row, and the file holds another type.
      expect(cell.recipe, cell.tensor).toMatchObject({ fallback: true, blockSize: recipe.blockSize });
      expect(cell.recipe!.rowLength % recipe.blockSize, cell.tensor).not.toBe(0);
      expect(cell.type).not.toBe(cell.recipe!.recipeType);
    }
    // The tensors the plan of the source makes fall back, and no other, have a note.
    const source = openGguf(STORIES_260K);
    const fellBack = new Set(
      planQuantization(source.gguf, 'Q4_K_M')
        .tensors.filter((t) => t.fallbackFrom)
        .map((t) => t.name),
    );
    source.file.close();
    expect(fellBack.size).toBeGreaterThan(0);
    expect(new Set(noted.map((c) => c.tensor))).toEqual(fellBack);

    // stories260K is F32 as written (its file type guessed): no recipe to compare with.
    const plain = mapOf(STORIES_260K);
    expect(plain.recipeFileType).toBeNull();
    expect(plain.layers.flatMap((l) => l.cells).every((c) => c === null || c.recipe === null)).toBe(true);
  });
});
