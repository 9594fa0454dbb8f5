import type { Command } from './command';

/**
 * Every `gufo` command: its name and one-line summary for `gufo --help`, and how to load it. A
 * command module (with everything it imports: the engine host, SQLite, the back end) is imported
 * only when its command runs, so `gufo --help` starts in a fraction of the time. The summary is
 * written here only.
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'inspect',
    summary: 'show the summary, metadata and tensors of a GGUF file',
    load: async () => (await import('./commands/inspect')).inspectCommand,
  },
  {
    name: 'quantize',
    summary: 'write a re-quantized copy of a model (Q4_K_M, Q8_0, ...)',
    load: async () => (await import('./commands/quantize')).quantizeCommand,
  },
  {
    name: 'dequant',
    summary: 'write one tensor as raw f32 (for debugging and outside checks)',
    load: async () => (await import('./commands/dequant')).dequantCommand,
  },
  {
    name: 'serve',
    summary: 'run the Gufo UI in a browser (no Electron needed) and the OpenAI-compatible API, on 127.0.0.1',
    load: async () => (await import('./commands/serve')).serveCommand,
  },
  {
    name: 'template',
    summary: "render a conversation with the file's chat template",
    load: async () => (await import('./commands/template')).templateCommand,
  },
  {
    name: 'tokenize',
    summary: "turn text into token ids with the model's vocabulary (as llama.cpp does)",
    load: async () => (await import('./commands/tokenize')).tokenizeCommand,
  },
  {
    name: 'run',
    summary: 'complete a prompt with a model on the GPU',
    load: async () => (await import('./commands/run')).runCommand,
  },
  {
    name: 'embed',
    summary: "embed texts with a model on the GPU (pooled, normalized, as llama.cpp's embeddings)",
    load: async () => (await import('./commands/embed')).embedCommand,
  },
  {
    name: 'chat',
    summary: 'chat with a model in the terminal, on the GPU',
    load: async () => (await import('./commands/chat')).chatCommand,
  },
  {
    name: 'bench',
    summary: 'measure prefill and decode speed on the GPU, against the memory roofline',
    load: async () => (await import('./commands/bench')).benchCommand,
  },
  {
    name: 'perplexity',
    summary: 'perplexity of a model over a text, as llama-perplexity computes it',
    load: async () => (await import('./commands/perplexity')).perplexityCommand,
  },
  {
    name: 'kld',
    summary: 'KL divergence, top-1 agreement and perplexity of a quantized model against its base',
    load: async () => (await import('./commands/kld')).kldCommand,
  },
  {
    name: 'imatrix',
    summary: 'compute an importance matrix on the GPU (llama-imatrix GGUF format) for gufo quantize --imatrix',
    load: async () => (await import('./commands/imatrix')).imatrixCommand,
  },
  {
    name: 'tensor-error',
    summary: 'per-tensor RMSE, relative error and SNR of an export against its source',
    load: async () => (await import('./commands/tensor-error')).tensorErrorCommand,
  },
  {
    name: 'models',
    summary: "list the model library (with Ollama's, LM Studio's and Hugging Face's models)",
    load: async () => (await import('./commands/models')).modelsCommand,
  },
  {
    name: 'pull',
    summary: 'download a GGUF file (http(s) or hf://) into the library, resumable',
    load: async () => (await import('./commands/pull')).pullCommand,
  },
  {
    name: 'ollama',
    summary: 'hand a model to Ollama: <name>.gguf, a Modelfile, and the model created in Ollama',
    load: async () => (await import('./commands/ollama')).ollamaCommand,
  },
];
