/**
 * Whether the engine can run a model file, and if not why: the one answer the library, the CLI,
 * the API and every model picker show. The architectures come from the engine's table.
 */
import { architectureTraits, isArchitectureName, unsupportedArchitectureMessage } from './architectures';

/** What the answer needs of a file's metadata summary. */
export interface RunnableFacts {
  readonly architecture: string | null;
  /** Elements over all tensors: 0 for a vocabulary-only file (llama.cpp's ggml-vocab-*.gguf). */
  readonly parameters: number;
}

/** Null when the engine can run the file; else what keeps it from running, in a few words. */
export function whyNotRunnable(facts: RunnableFacts): string | null {
  if (facts.parameters === 0) return 'vocabulary only: the file has no weights (a tokenizer file)';
  if (facts.architecture === null) return 'the file does not say its architecture (general.architecture)';
  if (!isArchitectureName(facts.architecture)) return unsupportedArchitectureMessage(facts.architecture);
  return null;
}

/** Why a runnable file cannot generate text (an encoder such as BERT only embeds), or null when it can. */
export function whyNoGeneration(architecture: string | null): string | null {
  return architectureTraits(architecture)?.encoder ? `an embedding model (${architecture}): it only embeds text` : null;
}
