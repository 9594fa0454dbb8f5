import { createBpeEncoder } from './bpe';
import { createSpmEncoder } from './spm';
import { GgufTokenizer, type FragmentEncoder, type Tokenizer } from './tokenizer';
import { VocabError, type Vocab } from './vocab';
import { createWpmEncoder } from './wpm';

export type {
  DetokenizeOptions,
  PieceOptions,
  StreamDecoder,
  StreamDecoderOptions,
  TokenizeOptions,
  Tokenizer,
} from './tokenizer';
export { readVocab, TokenAttr, TokenType, VocabError, type Vocab } from './vocab';

/** Tokenizer models (tokenizer.ggml.model) createTokenizer supports. */
export const SUPPORTED_TOKENIZER_MODELS: readonly string[] = ['llama', 'gpt2', 'bert'];

/**
 * The tokenizer for a vocabulary, by its tokenizer.ggml.model: "llama" (SentencePiece), "gpt2"
 * (byte-level BPE with the pre-tokenizer named by tokenizer.ggml.pre) or "bert" (WordPiece).
 * Anything else is a VocabError "unsupported tokenizer X"; an unknown pre-tokenizer is one too.
 */
export function createTokenizer(vocab: Vocab): Tokenizer {
  let encoder: FragmentEncoder;
  switch (vocab.model) {
    case 'llama':
      encoder = { kind: 'spm', encode: createSpmEncoder(vocab) };
      break;
    case 'gpt2':
      encoder = { kind: 'bpe', encode: createBpeEncoder(vocab) };
      break;
    case 'bert':
      encoder = { kind: 'wpm', encode: createWpmEncoder(vocab) };
      break;
    default:
      throw new VocabError(
        `${vocab.file}: unsupported tokenizer "${vocab.model}" (supported: ${SUPPORTED_TOKENIZER_MODELS.join(', ')})`,
      );
  }
  return new GgufTokenizer(vocab, encoder);
}
