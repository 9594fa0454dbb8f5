import { getLlama, LlamaCompletion, LlamaLogLevel, type Llama } from 'node-llama-cpp';

let llama: Promise<Llama> | undefined;

/** llama.cpp (CPU, prebuilt, never built here) through node-llama-cpp; `logs` collects its log lines. */
export const logs: string[] = [];

export function llamaCpp(): Promise<Llama> {
  return (llama ??= getLlama({
    build: 'never',
    gpu: false,
    // Debug level: tests read the sizes llama.cpp reports while loading.
    logLevel: LlamaLogLevel.debug,
    logger: (_level, message) => {
      logs.push(message);
    },
  }));
}

/** llama.cpp's greedy continuation of `prompt` with the model at `path`. */
export async function greedyCompletion(path: string, prompt: string, maxTokens: number): Promise<string> {
  const model = await (await llamaCpp()).loadModel({ modelPath: path });
  try {
    // One thread: on a 2-core machine llama.cpp's spinning threads otherwise slow it 1000-fold.
    const context = await model.createContext({ contextSize: 256, threads: 1 });
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    return await completion.generateCompletion(prompt, { maxTokens, temperature: 0 });
  } finally {
    await model.dispose();
  }
}

/** llama.cpp's token ids for `text` with the model at `path`, BOS first where the model adds one. */
export async function llamaPromptIds(path: string, text: string): Promise<number[]> {
  const model = await (await llamaCpp()).loadModel({ modelPath: path });
  try {
    const bos = model.tokens.shouldPrependBosToken && model.tokens.bos !== null ? [model.tokens.bos] : [];
    return [...bos, ...model.tokenize(text)] as number[];
  } finally {
    await model.dispose();
  }
}

/** llama.cpp's embedding of each input (a text, tokenized as the vocabulary wants, or token ids) with the model at `path`. */
export async function llamaEmbeddings(
  path: string,
  inputs: readonly (string | readonly number[])[],
): Promise<number[][]> {
  const model = await (await llamaCpp()).loadModel({ modelPath: path });
  try {
    const context = await model.createEmbeddingContext({ contextSize: 128, threads: 1 });
    const out: number[][] = [];
    for (const input of inputs) out.push([...(await context.getEmbeddingFor(input as string)).vector]);
    return out;
  } finally {
    await model.dispose();
  }
}

/** 1 − cosine similarity: 0 for vectors of one direction, whatever their lengths. */
export function cosineDistance(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / Math.sqrt(na * nb);
}
