/** The tiny random chat models the tool-call and MCP tests (unit, CLI and e2e) run. */
import { hfTokenizerKvs, QWEN3_SPEC } from './hf-vocab';
import { writeRandomModel } from './test-models';

/** One layer, 32 wide, with room for the tools' prompts. */
export const TINY_CHAT_SHAPE = {
  nLayer: 1,
  nEmbd: 32,
  nFf: 64,
  nHead: 2,
  tiedEmbeddings: true,
  contextLength: 1024,
} as const;

/** A random Qwen 3 with Qwen 3's vocabulary and chat template, whose template renders tools. */
export function writeRandomQwen3(path: string): Promise<void> {
  return writeRandomModel(path, {
    ...TINY_CHAT_SHAPE,
    arch: 'qwen3',
    tokenizer: hfTokenizerKvs(QWEN3_SPEC),
    name: 'random qwen3',
  });
}
