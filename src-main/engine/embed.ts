/**
 * Embeddings inside the engine process: each input evaluated alone from position 0 (one sequence
 * at a time, as llama.cpp embeds one sequence per batch slot), its final hidden states pooled and
 * normalized on the CPU (core/embedding-pooling.ts).
 */
import { embeddingPooling, poolEmbedding } from '../core/embedding-pooling';
import { EngineError, type Engine } from './engine';
import type { EmbedResult } from './protocol';

export async function embedInputs(engine: Engine, inputs: readonly (readonly number[])[]): Promise<EmbedResult> {
  const model = engine.model;
  if (!model) throw new EngineError('no model loaded');
  let pooling;
  try {
    pooling = embeddingPooling(model.pooling);
  } catch (err) {
    throw new EngineError(`${model.path}: ${(err as Error).message}`);
  }
  const embeddings: number[][] = [];
  let promptTokens = 0;
  for (const [i, ids] of inputs.entries()) {
    if (ids.length === 0) throw new EngineError(`input ${i} has no tokens`);
    const hidden = await engine.hiddenStates(ids);
    embeddings.push(Array.from(poolEmbedding(hidden, model.embedding, pooling)));
    promptTokens += ids.length;
  }
  return { embeddings, pooling, promptTokens };
}
