import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GgufType } from '../../src-main/core/gguf/values';
import { writeGguf } from '../../src-main/node/gguf-io';
import { gufo, type InspectJson } from '../support/cli';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

describe('gufo CLI', () => {
  it('prints its commands with --help', () => {
    const r = gufo(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Usage: gufo <command>/);
    expect(r.stdout).toMatch(/inspect\s+show the summary/);
    expect(r.stdout).toMatch(/serve\s+/);
  });

  it('rejects an unknown command in one line', () => {
    const r = gufo(['frobnicate']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('gufo: unknown command "frobnicate" (see gufo --help)\n');
  });

  it('documents inspect', () => {
    const r = gufo(['inspect', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/gufo inspect <model> \[--json\] \[--ctx N\]/);
  });
});

describe('gufo inspect', () => {
  it('--json gives the documented document', () => {
    const r = gufo(['inspect', STORIES_260K, '--json']);
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as InspectJson;
    expect(Object.keys(doc)).toEqual([
      'version',
      'alignment',
      'dataOffset',
      'fileBytes',
      'metadata',
      'tensors',
      'summary',
    ]);
    expect(doc).toMatchObject({ version: 3, alignment: 32, dataOffset: 14176, fileBytes: 1185376 });
    expect(doc.metadata['llama.block_count']).toBe(5);
    expect(doc.metadata['llama.attention.layer_norm_rms_epsilon']).toBe(1e-5);
    expect(doc.metadata['tokenizer.ggml.seperator_token_id']).toBe(4294967295);
    expect(doc.metadata['tokenizer.ggml.tokens']).toEqual({
      arrayOf: 'string',
      length: 512,
      head: ['<unk>', '<s>', '</s>', '<0x00>', '<0x01>', '<0x02>', '<0x03>', '<0x04>'],
    });
    expect(doc.tensors).toHaveLength(48);
    expect(doc.tensors[0]).toEqual({ name: 'token_embd.weight', type: 'F32', ne: [64, 512], offset: 0, bytes: 131072 });
    expect(doc.summary).toMatchObject({ architecture: 'llama', layers: 5, parameters: 292800, vocabSize: 512 });
    expect(doc.summary.kvCache?.context).toBe(2048);
    // The file does not say its type: the JSON carries the guess the text shows as "F32 (guessed)".
    expect(doc.summary).toMatchObject({ fileType: null, guessedFileType: 'F32' });
    expect(gufo(['inspect', STORIES_260K]).stdout).toMatch(/^ {2}file type +F32 \(guessed\)$/m);
    expect(r.stderr).toBe('');
  });

  it('--ctx sets the context of the KV cache estimate', () => {
    const r = gufo(['inspect', STORIES_260K, '--json', '--ctx', '512']);
    expect((JSON.parse(r.stdout) as InspectJson).summary.kvCache).toMatchObject({ context: 512, bytes: 512 * 640 });
  });

  it('lists arrays of up to 64 items in full and elides longer ones', async () => {
    const path = join(tempDir(), 'arrays.gguf');
    const array = (n: number) => ({
      itemType: GgufType.INT32 as const,
      items: Int32Array.from({ length: n }, (_, i) => i),
    });
    await writeGguf(
      path,
      {
        kvs: [
          { key: 'short', type: GgufType.ARRAY, value: array(64) },
          { key: 'long', type: GgufType.ARRAY, value: array(65) },
        ],
        tensors: [],
      },
      () => [],
    );
    const doc = JSON.parse(gufo(['inspect', path, '--json']).stdout) as InspectJson;
    expect(doc.metadata.short).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(doc.metadata.long).toEqual({ arrayOf: 'int32', length: 65, head: [0, 1, 2, 3, 4, 5, 6, 7] });
  });

  it('prints summary, metadata, tensors and totals for people', () => {
    const r = gufo(['inspect', STORIES_260K]);
    expect(r.status).toBe(0);
    for (const heading of ['Summary', 'Metadata', 'Tensors', 'Totals by type'])
      expect(r.stdout).toContain(`\n${heading}\n`);
    expect(r.stdout).toMatch(/tokenizer\.ggml\.tokens\s+\[string\]\s+512 items: "<unk>", "<s>"/);
    expect(r.stdout).toMatch(/blk\.0\.ffn_gate\.weight\s+F32\s+\[64, 172\]\s+44,032\s+32\.00/);
    expect(r.stdout).toMatch(/KV cache memory\s+1\.25 MiB at context 2,048/);
    // stories260K has no general.file_type: the type is guessed from its tensors, as the UI guesses it.
    expect(r.stdout).toMatch(/file type\s+F32 \(guessed\)\n/);
  });

  it('fails on a bad file with one line naming the file and the problem', () => {
    const path = join(tempDir(), 'bad.gguf');
    writeFileSync(path, 'GGUF\x03\x00\x00\x00');
    const r = gufo(['inspect', path]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`gufo: ${path}: tensor_count: file is truncated: needs 8 bytes at offset 8, only 0 left\n`);
  });

  it('rejects a bad --ctx value and a missing file argument', () => {
    expect(gufo(['inspect', STORIES_260K, '--ctx', 'lots']).stderr).toBe(
      'gufo: --ctx must be a non-negative integer, got "lots"\n',
    );
    const r = gufo(['inspect']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('gufo: expected exactly one file (see gufo inspect --help)\n');
  });
});
