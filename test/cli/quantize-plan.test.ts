import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planEntry, predictExport } from '../../src-main/core/export-size';
import { openGguf } from '../../src-main/node/gguf-io';
import { gufo } from '../support/cli';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

function plan(type: 'Q4_K_M' | 'Q6_K' | 'Q8_0') {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    const p = predictExport(gguf, type);
    return { entry: planEntry(p), outputTypes: p.outputTypes };
  } finally {
    file.close();
  }
}

/** Tensors per ggml type in a written file. */
function typeCounts(path: string): Record<string, number> {
  const { gguf, file } = openGguf(path);
  try {
    const counts: Record<string, number> = {};
    for (const t of gguf.tensors) counts[t.type.name] = (counts[t.type.name] ?? 0) + 1;
    return counts;
  } finally {
    file.close();
  }
}

describe('quantization plan: bytes, bits per weight, fallbacks', () => {
  it("stories260K's 64- and 172-wide rows hold no K-quant block: Q4_K_M falls back to Q5_0, Q8_0 and F16", () => {
    expect(plan('Q4_K_M').entry).toEqual({
      type: 'Q4_K_M',
      bytes: expect.any(Number) as number,
      bitsPerWeight: expect.closeTo(7.92, 2) as number,
      fallbacks: [
        { from: 'Q4_K', to: 'Q5_0', tensors: 29 },
        { from: 'Q4_K', to: 'F16', tensors: 3 },
        { from: 'Q6_K', to: 'Q8_0', tensors: 2 },
        { from: 'Q6_K', to: 'F16', tensors: 2 },
      ],
    });
  });

  it.each(['Q4_K_M', 'Q6_K', 'Q8_0'] as const)(
    '%s: planned bytes and output types are those of the file gufo quantize writes, and it prints them',
    (type) => {
      const out = join(tempDir(), `out-${type}.gguf`);
      const r = gufo(['quantize', STORIES_260K, out, '--type', type], {}, 120_000);
      expect(r.status, r.stderr).toBe(0);
      const { entry, outputTypes } = plan(type);
      expect(statSync(out).size).toBe(entry.bytes);
      expect(typeCounts(out)).toEqual(Object.fromEntries(outputTypes.map((t) => [t.type, t.tensors])));
      expect(r.stderr).toContain(
        `${entry.bitsPerWeight.toFixed(2)} bits per weight; tensors: ${outputTypes.map((t) => `${t.tensors} ${t.type}`).join(', ')}`,
      );
      for (const f of entry.fallbacks) expect(r.stderr).toContain(`${f.tensors} ${f.from} → ${f.to}`);
    },
    150_000,
  );
});
