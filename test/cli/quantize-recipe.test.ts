/**
 * `gufo quantize --tensor-type PATTERN=TYPE ...`: the overrides reach the written file, the file
 * records its recipe in its metadata (gufo.quantize.recipe), `gufo inspect` shows it, llama.cpp
 * still loads the file, and bad overrides end in one line naming the argument.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { predictExport } from '../../src-main/core/export-size';
import { llamaFileTypeId } from '../../src-main/core/llama-file-types';
import { parseTensorTypeArg, RECIPE_KEY } from '../../src-main/core/recipe-overrides';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { openGguf } from '../../src-main/node/gguf-io';
import { gufo, type InspectJson } from '../support/cli';
import { greedyCompletion } from '../support/llama';
import { llamaModelQuantize } from '../support/llama-quantize';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

function read(path: string) {
  const { gguf, file } = openGguf(path);
  try {
    return {
      types: Object.fromEntries(gguf.tensors.map((t) => [t.name, t.type.name])),
      recipe: gguf.getString(RECIPE_KEY),
      kvs: gguf.kvs.length,
    };
  } finally {
    file.close();
  }
}

describe('gufo quantize --tensor-type', () => {
  it('writes the overrides, records the recipe, and inspect shows it; llama.cpp loads the file', async () => {
    const dir = tempDir();
    const out = join(dir, 'custom.gguf');
    const args = [
      '--type',
      'Q8_0',
      '--tensor-type',
      'attn_v=f16',
      '--tensor-type',
      'blk\\.[0-1]\\.ffn_up=q4_0',
      '--output-tensor-type',
      'q5_0',
    ];
    const r = gufo(['quantize', STORIES_260K, out, ...args]);
    expect(r.status, r.stderr).toBe(0);
    const ours = read(out);
    expect(ours.types['blk.0.attn_v.weight']).toBe('F16');
    expect(ours.types['blk.1.ffn_up.weight']).toBe('Q4_0');
    expect(ours.types['blk.2.ffn_up.weight']).toBe('Q8_0');
    expect(ours.types['output.weight']).toBe('Q5_0');
    expect(JSON.parse(ours.recipe!)).toEqual({
      fileType: 'Q8_0',
      tensorTypes: [
        { pattern: 'attn_v', type: 'F16' },
        { pattern: 'blk\\.[0-1]\\.ffn_up', type: 'Q4_0' },
      ],
      outputTensorType: 'Q5_0',
    });

    // The size the export screen predicts for this recipe is the written file's.
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const tensorTypes = ['attn_v=f16', 'blk\\.[0-1]\\.ffn_up=q4_0'].map(parseTensorTypeArg);
      expect(predictExport(gguf, 'Q8_0', { tensorTypes, outputTensorType: ggmlTypeByName('Q5_0') }).fileBytes).toBe(
        statSync(out).size,
      );
    } finally {
      file.close();
    }

    const inspect = gufo(['inspect', out]);
    expect(inspect.status, inspect.stderr).toBe(0);
    expect(inspect.stdout).toMatch(/^ {2}recipe {13}Q8_0; attn_v=F16, blk\\\.\[0-1\]\\\.ffn_up=Q4_0, output Q5_0$/m);
    expect((JSON.parse(gufo(['inspect', out, '--json']).stdout) as InspectJson).summary.recipe).toBe(
      'Q8_0; attn_v=F16, blk\\.[0-1]\\.ffn_up=Q4_0, output Q5_0',
    );

    // llama.cpp ignores the key: same tensors as its own file, same continuation.
    const theirs = join(dir, 'llama.gguf');
    const q = llamaModelQuantize(STORIES_260K, theirs, llamaFileTypeId('Q8_0')!, {
      outputTensorType: ggmlTypeByName('Q5_0')!.id,
      tensorTypes: [
        { pattern: 'attn_v', type: ggmlTypeByName('F16')!.id },
        { pattern: 'blk\\.[0-1]\\.ffn_up', type: ggmlTypeByName('Q4_0')!.id },
      ],
    });
    expect(q.ok, q.log).toBe(true);
    expect(read(theirs).types).toEqual(ours.types);
    expect(read(theirs).recipe).toBeUndefined();
    const text = await greedyCompletion(out, 'Once upon a time', 12);
    expect(text.length).toBeGreaterThan(0);
    expect(text).toBe(await greedyCompletion(theirs, 'Once upon a time', 12));
  }, 120_000);

  it("writes no recipe key for a plain file type (the file stays llama.cpp's)", () => {
    const out = join(tempDir(), 'plain.gguf');
    expect(gufo(['quantize', STORIES_260K, out, '--type', 'Q8_0']).status).toBe(0);
    expect(read(out).recipe).toBeUndefined();
    const inspect = gufo(['inspect', out]);
    expect(inspect.stdout).not.toMatch(/^ {2}recipe /m);
  });

  it('refuses bad overrides in one line naming the argument', () => {
    const dir = tempDir();
    const cases: [string, string][] = [
      ['attn_v', 'gufo: --tensor-type "attn_v": expected PATTERN=TYPE, e.g. attn_v=q8_0'],
      ['attn_v=q9_k', 'gufo: tensor type pattern "attn_v": unknown ggml type "q9_k" (e.g. q8_0, q6_k, q4_k, f16)'],
      [
        'blk.(0=q8_0',
        'gufo: tensor type pattern "blk.(0" is not a valid regular expression: Invalid regular expression: /blk.(0/: Unterminated group',
      ],
    ];
    for (const [arg, message] of cases) {
      const r = gufo(['quantize', STORIES_260K, join(dir, 'out.gguf'), '--type', 'Q8_0', '--tensor-type', arg]);
      expect(r.status, arg).toBe(1);
      expect(r.stderr.trim()).toBe(message);
    }
  });
});
