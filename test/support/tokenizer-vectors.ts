import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODELS, SHARED } from './paths';

/** llama.cpp's vocab-only GGUF files (ggml-vocab-*.gguf). */
export const VOCAB_DIR = join(MODELS, 'vocab');
/** llama.cpp's tokenizer test vectors: <vocab>.gguf.inp / <vocab>.gguf.out. */
export const TOKENIZER_TESTS_DIR = join(SHARED, 'tokenizer-tests');

/** One case of llama.cpp's test-tokenizer-0: the text and the ids llama.cpp gives it (no BOS, no special parsing). */
export interface TokenizerVector {
  readonly text: string;
  readonly ids: readonly number[];
}

const SEPARATOR = '\n__ggml_vocab_test__\n';

/** Path of ../shared/models/vocab/<name>.gguf, e.g. vocabPath('ggml-vocab-llama-spm'). */
export function vocabPath(name: string): string {
  return join(VOCAB_DIR, `${name}.gguf`);
}

export function hasTokenizerVectors(name: string): boolean {
  return (
    existsSync(join(TOKENIZER_TESTS_DIR, `${name}.gguf.inp`)) &&
    existsSync(join(TOKENIZER_TESTS_DIR, `${name}.gguf.out`))
  );
}

/**
 * The cases of ../shared/tokenizer-tests/<name>.gguf.inp/.out, e.g. loadTokenizerVectors('ggml-vocab-llama-spm').
 * Split exactly as llama.cpp's test-tokenizer-0 does: `.inp` on "\n__ggml_vocab_test__\n" (the file
 * ends with the separator), `.out` one line of space-separated ids per case (empty for no ids).
 */
export function loadTokenizerVectors(name: string): TokenizerVector[] {
  const inp = readFileSync(join(TOKENIZER_TESTS_DIR, `${name}.gguf.inp`), 'utf8');
  const out = readFileSync(join(TOKENIZER_TESTS_DIR, `${name}.gguf.out`), 'utf8');
  const texts = inp.split(SEPARATOR);
  if (texts[texts.length - 1] === '') texts.pop();
  const lines = out.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (texts.length !== lines.length) {
    throw new Error(`${name}: ${texts.length} inputs but ${lines.length} output lines`);
  }
  return texts.map((text, i) => ({
    text,
    ids: lines[i]!.trim()
      .split(/\s+/)
      .filter((s) => s !== '')
      .map(Number),
  }));
}
