import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { predictExport } from '../../src-main/core/export-size';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { GgufType } from '../../src-main/core/gguf/values';
import { llamaFileTypeId } from '../../src-main/core/llama-file-types';
import type { QuantFileType } from '../../src-main/core/quant-recipes';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { loadImatrix } from '../../src-main/node/imatrix-file';
import { quantizePlan } from '../../src-main/node/quant-plan';
import { quantizeFile } from '../../src-main/node/quantize';
import { gufo } from '../support/cli';
import { llamaModelQuantize } from '../support/llama-quantize';
import { expectSameTensors } from '../support/same-gguf';
import { mulberry32 } from '../support/random';
import { writeRandomModel } from '../support/test-models';

const F32 = ggmlTypeByName('F32')!;
/** Ours and llama-quantize's, one after the other: the slowest types (IQ1_S) take over a minute under load. */
const QUANTIZE_TIMEOUT = 180_000;
let dir: string;
let model: string;
/** llama-imatrix GGUF file with weights for every matrix of `model`. */
let imatrixFile: string;
/** The same, without blk.1.ffn_down.weight. */
let partialImatrixFile: string;

/** Writes an imatrix GGUF: in_sum2 and counts per matrix (4 tokens each), so the weights read back are `entries`. */
async function writeImatrix(path: string, entries: [string, Float32Array][]): Promise<void> {
  const tensors = entries.flatMap(([name, w]) => [
    { name: `${name}.in_sum2`, type: F32, ne: [w.length, 1] },
    { name: `${name}.counts`, type: F32, ne: [1, 1] },
  ]);
  await writeGguf(path, { kvs: [{ key: 'general.type', type: GgufType.STRING, value: 'imatrix' }], tensors }, (i) => {
    const [, w] = entries[i >> 1]!;
    return [new Uint8Array((i % 2 === 0 ? w.map((v) => v * 4) : Float32Array.of(4)).buffer)];
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-iq2-'));
  model = join(dir, 'model.gguf');
  await writeRandomModel(model, { nLayer: 2, nEmbd: 256, nFf: 512, nHead: 4, nHeadKv: 2 });
  const { gguf, file } = openGguf(model);
  const rng = mulberry32(21);
  let entries: [string, Float32Array][];
  try {
    // Squared activations with a few loud columns, as llama-imatrix collects them.
    entries = gguf.tensors
      .filter((t) => t.ne.length >= 2)
      .map((t) => [t.name, Float32Array.from({ length: Number(t.ne[0]) }, () => Math.exp(2 * rng.gaussian()))]);
  } finally {
    file.close();
  }
  imatrixFile = join(dir, 'imatrix.gguf');
  await writeImatrix(imatrixFile, entries);
  partialImatrixFile = join(dir, 'partial.imatrix.gguf');
  await writeImatrix(
    partialImatrixFile,
    entries.filter(([name]) => name !== 'blk.1.ffn_down.weight'),
  );
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface PlanRow {
  type: string;
  bytes: number | null;
  predicted: unknown;
  unavailable: string | null;
}

let planWithout: PlanRow[] | undefined;

/**
 * `gufo quantize --plan model --json` without an imatrix, spawned once for the whole file (the
 * command's one real run here: it measures every type that needs no imatrix).
 */
function plan(): PlanRow[] {
  if (!planWithout) {
    const r = gufo(['quantize', '--plan', model, '--json'], {}, 120_000);
    expect(r.status, r.stderr).toBe(0);
    planWithout = JSON.parse(r.stdout) as PlanRow[];
  }
  return planWithout;
}

/**
 * The plan `--plan --imatrix path` prints, computed in-process (quantizePlan, what the command
 * prints) for the types asserted only: each row is measured on its own, whatever the other types.
 */
async function planWithImatrix(path: string, types: QuantFileType[]): Promise<PlanRow[]> {
  const { gguf, file } = openGguf(model);
  try {
    return await quantizePlan(gguf, { imatrix: loadImatrix(path), types });
  } finally {
    file.close();
  }
}

/**
 * quantizeFile, what `gufo quantize --type fileType --imatrix` runs (spawned once, for Q2_K_S
 * below), and llama-quantize with the same imatrix write the same tensors, in the size the export
 * (and `gufo quantize --plan`) predicts; returns the types of ours.
 */
async function quantizeLikeLlama(fileType: QuantFileType): Promise<string[]> {
  const ours = join(dir, `ours-${fileType}.gguf`);
  const theirs = join(dir, `llama-${fileType}.gguf`);
  const imatrix = loadImatrix(imatrixFile);
  await quantizeFile(model, ours, fileType, { imatrix });
  const result = llamaModelQuantize(model, theirs, llamaFileTypeId(fileType)!, { imatrix });
  expect(result.ok, result.log.slice(-2000)).toBe(true);
  expectSameTensors(ours, theirs, fileType);
  const { gguf, file } = openGguf(model);
  try {
    expect(
      predictExport(gguf, fileType, { imatrix, imatrixEntries: imatrix.size }).fileBytes,
      `${fileType}: predicted size`,
    ).toBe(statSync(ours).size);
  } finally {
    file.close();
  }
  const { gguf: written, file: writtenFile } = openGguf(ours);
  try {
    return written.tensors.map((t): string => t.type.name);
  } finally {
    writtenFile.close();
  }
}

describe('gufo quantize to IQ2_XXS, IQ2_XS, IQ1_S and IQ1_M', () => {
  it.each(['IQ2_XXS', 'IQ2_XS', 'IQ1_S', 'IQ1_M'] as const)(
    '--type %s --imatrix writes the file llama-quantize writes with the same imatrix, byte for byte',
    async (fileType) => {
      const types = await quantizeLikeLlama(fileType);
      expect(types.includes(fileType)).toBe(true);
    },
    QUANTIZE_TIMEOUT,
  );

  it('refuses without an importance matrix, as llama-quantize does, and says how to give one', () => {
    const r = gufo(['quantize', model, join(dir, 'none.gguf'), '--type', 'IQ2_XXS']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/IQ2_XXS needs an importance matrix \(--imatrix FILE\)/);
    expect(llamaModelQuantize(model, join(dir, 'llama-none.gguf'), llamaFileTypeId('IQ2_XXS')!).ok).toBe(false);
  });

  it('refuses IQ1_M without an importance matrix, as llama-quantize does (ggml itself would write it)', async () => {
    await expect(quantizeFile(model, join(dir, 'none-iq1_m.gguf'), 'IQ1_M')).rejects.toThrow(
      /IQ1_M needs an importance matrix \(--imatrix FILE\): tensor "blk\.0\.[a-z_.]+" becomes IQ1_M/,
    );
    expect(llamaModelQuantize(model, join(dir, 'llama-none-iq1_m.gguf'), llamaFileTypeId('IQ1_M')!).ok).toBe(false);
  });

  it('names the tensor an importance matrix has no weights for', async () => {
    await expect(
      quantizeFile(model, join(dir, 'partial.gguf'), 'IQ2_XS', { imatrix: loadImatrix(partialImatrixFile) }),
    ).rejects.toThrow(/tensor "blk\.1\.ffn_down\.weight" becomes IQ2_XS.*has none for it/);
  });

  it('--plan lists IQ2_XXS, IQ2_XS, IQ1_S, IQ1_M, IQ3_XXS and IQ3_XS as needing an importance matrix, and measures them with one', async () => {
    const needing = [
      ['IQ2_XXS', 'IQ2_XXS'],
      ['IQ2_XS', 'IQ2_XS'],
      ['IQ1_S', 'IQ1_S'],
      ['IQ1_M', 'IQ1_M'],
      ['IQ3_XXS', 'IQ2_S'],
      ['IQ3_XS', 'IQ3_XXS'],
    ] as const;
    const without = plan();
    const withImatrix = await planWithImatrix(
      imatrixFile,
      needing.map(([type]) => type),
    );
    for (const [type, tensorType] of needing) {
      expect(without.find((row) => row.type === type)!.unavailable).toMatch(
        // Named as the file type's choice (issue #30 item 9): IQ3_XXS's mixture puts IQ2_S on some tensors.
        new RegExp(`${type} makes it ${tensorType}, which needs an importance matrix`),
      );
      const row = withImatrix.find((x) => x.type === type)!;
      expect(row.unavailable).toBeNull();
      expect(row.bytes).toBeGreaterThan(0);
      expect(row.predicted).not.toBeNull();
    }
    // Types that need no importance matrix stay available without one.
    for (const type of ['Q4_K_M', 'IQ3_S', 'IQ3_M'])
      expect(without.find((row) => row.type === type)!.unavailable).toBeNull();
    // An importance matrix without weights for a tensor such a type would take: that type is unavailable, the others are measured.
    const partial = await planWithImatrix(partialImatrixFile, ['IQ2_XS', 'Q4_K_M']);
    expect(partial.find((row) => row.type === 'IQ2_XS')!.unavailable).toMatch(
      /blk\.1\.ffn_down\.weight.*IQ2_XS makes it IQ2_XS, which needs importance weights/,
    );
    expect(partial.find((row) => row.type === 'Q4_K_M')!.predicted).not.toBeNull();
  }, 180_000); // one plan measuring every type, two measuring a few
});

describe('gufo quantize to Q2_K_S', () => {
  it('--imatrix writes the file llama-quantize writes with the same imatrix, byte for byte', () => {
    const ours = join(dir, 'ours-Q2_K_S.gguf');
    const theirs = join(dir, 'llama-Q2_K_S.gguf');
    const r = gufo(['quantize', model, ours, '--type', 'Q2_K_S', '--imatrix', imatrixFile], {}, 120_000);
    expect(r.status, r.stderr).toBe(0);
    const result = llamaModelQuantize(model, theirs, llamaFileTypeId('Q2_K_S')!, { imatrix: loadImatrix(imatrixFile) });
    expect(result.ok, result.log.slice(-2000)).toBe(true);
    expectSameTensors(ours, theirs, 'Q2_K_S');
  });

  it('refuses without an importance matrix, as llama-quantize does (its Q2_K tensors need one; plain Q2_K does not)', async () => {
    await expect(quantizeFile(model, join(dir, 'none-q2_k_s.gguf'), 'Q2_K_S')).rejects.toThrow(
      /Q2_K_S needs an importance matrix \(--imatrix FILE\): tensor "blk\.0\.[a-z_.]+" becomes Q2_K/,
    );
    expect(llamaModelQuantize(model, join(dir, 'llama-none-q2_k_s.gguf'), llamaFileTypeId('Q2_K_S')!).ok).toBe(false);
    const rows = plan();
    expect(rows.find((row) => row.type === 'Q2_K_S')!.unavailable).toMatch(
      /Q2_K_S makes it Q2_K, which needs an importance matrix/,
    );
    expect(rows.find((row) => row.type === 'Q2_K')!.unavailable).toBeNull();
  });
});

describe('gufo quantize to IQ2_S and IQ2_M', () => {
  // IQ2_S files are mostly IQ2_XS, IQ2_M files mostly IQ2_S; both protect attn_v, attn_output,
  // the first ffn_down layers and the token embeddings with IQ3_S.
  it.each([
    ['IQ2_S', 'IQ2_XS'],
    ['IQ2_M', 'IQ2_S'],
  ] as const)(
    '--type %s --imatrix writes the file llama-quantize writes with the same imatrix, byte for byte (%s and IQ3_S tensors)',
    async (fileType, main) => {
      const types = await quantizeLikeLlama(fileType);
      expect(types.includes(main) && types.includes('IQ3_S'), types.join(', ')).toBe(true);
    },
    QUANTIZE_TIMEOUT,
  );

  it('refuses IQ2_S and IQ2_M without an importance matrix, as llama-quantize does', async () => {
    for (const fileType of ['IQ2_S', 'IQ2_M'] as const) {
      await expect(quantizeFile(model, join(dir, `none-${fileType}.gguf`), fileType)).rejects.toThrow(
        new RegExp(
          `${fileType} needs an importance matrix \\(--imatrix FILE\\): tensor "blk\\.0\\.[a-z_.]+" becomes IQ2_X?S`,
        ),
      );
      expect(llamaModelQuantize(model, join(dir, `llama-none-${fileType}.gguf`), llamaFileTypeId(fileType)!).ok).toBe(
        false,
      );
    }
  });
});

describe('gufo quantize to IQ3_XXS, IQ3_XS, IQ3_S and IQ3_M', () => {
  // IQ3_XS files are mostly IQ3_S with IQ3_XXS attn_q, attn_k and middle ffn_gate/ffn_up; IQ3_XXS
  // files keep attn_output and the token embeddings at IQ3_S and take attn_q and attn_k down to IQ2_S.
  it.each([
    ['IQ3_XXS', ['IQ3_XXS', 'IQ3_S', 'IQ2_S']],
    ['IQ3_XS', ['IQ3_S', 'IQ3_XXS']],
    ['IQ3_S', ['IQ3_S']],
    ['IQ3_M', ['IQ3_S', 'Q4_K']],
  ] as const)(
    '--type %s --imatrix writes the file llama-quantize writes with the same imatrix, byte for byte, in the size the plan predicts',
    async (fileType, expected) => {
      const types = await quantizeLikeLlama(fileType);
      for (const type of expected) expect(types, fileType).toContain(type);
    },
    QUANTIZE_TIMEOUT,
  );

  it('refuses IQ3_XXS and IQ3_XS without an importance matrix, as llama-quantize does (their attn_k is IQ2_S and IQ3_XXS)', async () => {
    for (const [fileType, attnK] of [
      ['IQ3_XXS', 'IQ2_S'],
      ['IQ3_XS', 'IQ3_XXS'],
    ] as const) {
      await expect(quantizeFile(model, join(dir, `none-${fileType}.gguf`), fileType)).rejects.toThrow(
        new RegExp(
          `${fileType} needs an importance matrix \\(--imatrix FILE\\): tensor "blk\\.0\\.attn_k\\.weight" becomes ${attnK}`,
        ),
      );
      expect(llamaModelQuantize(model, join(dir, `llama-none-${fileType}.gguf`), llamaFileTypeId(fileType)!).ok).toBe(
        false,
      );
    }
  });
});
