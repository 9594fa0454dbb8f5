import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bytesWrittenAt, predictExport } from '../../src-main/core/export-size';
import { planQuantization, QUANT_FILE_TYPES, tensorNeedsImatrix } from '../../src-main/core/quant-recipes';
import { openGguf } from '../../src-main/node/gguf-io';
import { quantizeFile } from '../../src-main/node/quantize';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

function predict(path: string, fileType: (typeof QUANT_FILE_TYPES)[number], imatrixEntries?: number) {
  const { gguf, file } = openGguf(path);
  try {
    return predictExport(gguf, fileType, { imatrixEntries });
  } finally {
    file.close();
  }
}

function typesOf(path: string): Map<string, string> {
  const { gguf, file } = openGguf(path);
  try {
    return new Map(gguf.tensors.map((t) => [t.name, t.type.name]));
  } finally {
    file.close();
  }
}

/** Weights of 1 for every matrix, when `fileType` gives some tensor of `path` a type that needs an importance matrix. */
function imatrixIfNeeded(
  path: string,
  fileType: (typeof QUANT_FILE_TYPES)[number],
): Map<string, Float32Array> | undefined {
  const { gguf, file } = openGguf(path);
  try {
    if (
      !planQuantization(gguf, fileType).tensors.some(
        (t) => t.from !== t.to && tensorNeedsImatrix(fileType, t.name, t.to),
      )
    )
      return undefined;
    return new Map(
      gguf.tensors.filter((t) => t.ne.length >= 2).map((t) => [t.name, new Float32Array(Number(t.ne[0])).fill(1)]),
    );
  } finally {
    file.close();
  }
}

/** Tensor data bytes and weights of a written file, read back from its own header. */
function measured(path: string) {
  const { gguf, file } = openGguf(path);
  try {
    const bytes = gguf.tensors.reduce((n, t) => n + t.bytes, 0);
    const elements = gguf.tensors.reduce((n, t) => n + t.elements, 0);
    return { bytes, elements, starts: new Map(gguf.tensors.map((t) => [t.name, gguf.dataOffset + t.offset])) };
  } finally {
    file.close();
  }
}

describe('predictExport', () => {
  // A random model with K-quant-sized rows (256) and GQA, and stories260K (rows of 64: K-quants fall back).
  it.each(QUANT_FILE_TYPES)('%s: the predicted size is the written size, to the byte', async (fileType) => {
    const dir = tempDir();
    const random = join(dir, 'random.gguf');
    await writeRandomModel(random, { nLayer: 2, nEmbd: 256, nFf: 512, nHead: 4, nHeadKv: 2, weightType: 'F16' });
    for (const source of [random, STORIES_260K]) {
      const imatrix = imatrixIfNeeded(source, fileType);
      const p = predict(source, fileType, imatrix?.size);
      // One output per source: quantizeFile never replaces a file.
      const out = join(dir, `out-${fileType}-${source === random ? 'random' : 'stories'}.gguf`);
      const report = await quantizeFile(source, out, fileType, { imatrix });
      expect(p.unsupported).toBeNull();
      expect(p.requantized).toEqual([]);
      expect(statSync(out).size, `${source} → ${fileType}`).toBe(p.fileBytes);
      expect(report.bytesOut).toBe(p.fileBytes);
      const m = measured(out);
      expect(p.tensorBytes).toBe(m.bytes);
      expect(p.elements).toBe(m.elements);
      expect(p.bitsPerWeight).toBeCloseTo((m.bytes * 8) / m.elements, 12);
      for (const t of p.tensors) expect(t.start, t.name).toBe(m.starts.get(t.name));
    }
  });

  it('names the quantized tensors a type would convert again', async () => {
    const dir = tempDir();
    const q8 = join(dir, 'q8.gguf');
    await quantizeFile(STORIES_260K, q8, 'Q8_0');
    const same = predict(q8, 'Q8_0');
    expect(same.requantized).toEqual([]);
    const q4 = predict(q8, 'Q4_0');
    expect(q4.requantized.length).toBeGreaterThan(0);
    expect(q4.requantized[0]).toMatchObject({ from: 'Q8_0', to: 'Q4_0' });
    // Exactly the quantized tensors whose type the written file changes.
    await expect(quantizeFile(q8, join(dir, 'q4.gguf'), 'Q4_0')).rejects.toThrow(/already quantized/);
    await quantizeFile(q8, join(dir, 'q4.gguf'), 'Q4_0', { allowRequantize: true });
    const before = typesOf(q8);
    const after = typesOf(join(dir, 'q4.gguf'));
    const changed = [...before]
      .filter(([name, type]) => type !== 'F32' && after.get(name) !== type)
      .map(([name]) => name);
    expect(q4.requantized.map((t) => t.name).sort()).toEqual(changed.sort());
    expect(q4.requantized.map((t) => t.name)).not.toContain('output.weight'); // kept as Q8_0 (rows of 64)
  });

  it('turns element progress into bytes of the output', () => {
    const p = predict(STORIES_260K, 'Q8_0');
    const [first, second] = p.tensors;
    expect(bytesWrittenAt(p, 0, 0)).toBe(first!.start);
    expect(bytesWrittenAt(p, 0, first!.elements)).toBe(first!.start + first!.bytes);
    expect(bytesWrittenAt(p, 1, second!.elementsBefore + second!.elements / 2)).toBe(
      second!.start + Math.round(second!.bytes / 2),
    );
    const last = p.tensors.at(-1)!;
    expect(bytesWrittenAt(p, p.tensors.length - 1, p.elements)).toBe(last.start + last.bytes);
    expect(last.start + last.bytes).toBeLessThanOrEqual(p.fileBytes);
  });
});
