/**
 * Embeddings inside the engine process: each input evaluated from position 0 as a sequence of its
 * own (an encoder runs several in one pass, as llama.cpp puts one sequence in each batch slot), its
 * final hidden states pooled and normalized on the CPU (core/embedding-pooling.ts).
 */
import { embeddingPooling, poolEmbedding } from '../core/embedding-pooling';
import { EngineError, type Engine } from './engine';
import type { EmbedResult } from '../engine-wire/protocol';

export async function embedInputs(engine: Engine, inputs: readonly (readonly number[])[]): Promise<EmbedResult> {
  const model = engine.model;
  if (!model) throw new EngineError('no model loaded');
  let pooling;
  try {
    pooling = embeddingPooling(model.pooling);
  } catch (err) {
    throw new EngineError(`${model.path}: ${(err as Error).message}`);
  }
  const empty = inputs.findIndex((ids) => ids.length === 0);
  if (empty !== -1) throw new EngineError(`input ${empty} has no tokens`);
  const hidden = await engine.hiddenStatesOfEach(inputs);
  const embeddings = hidden.map((states) => Array.from(poolEmbedding(states, model.embedding, pooling)));
  const promptTokens = inputs.reduce((sum, ids) => sum + ids.length, 0);
  return { embeddings, pooling, promptTokens };
}
