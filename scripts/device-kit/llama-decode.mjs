// llama.cpp's Vulkan build (node-llama-cpp's prebuilt binaries), llama-bench style on one file:
// `node llama-decode.mjs <file.gguf> <prompt tokens> <generated tokens> [cpu threads] [--depth=N]`
// prefills the prompt, then decodes greedily, all layers on the GPU (or, given a thread count, on
// the CPU with that many threads: scripts/bench/vs-llama.ts), and prints { prefillTokS,
// decodeTokS, adapter } as JSON. --depth=N first evaluates N tokens, untimed (llama-bench's -d).
import { getLlama } from 'node-llama-cpp';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--depth='));
const depthArg = process.argv.slice(2).find((a) => a.startsWith('--depth='));
const depth = depthArg === undefined ? 0 : Number(depthArg.slice('--depth='.length));
const [path, p, n] = [args[0], Number(args[1] ?? 64), Number(args[2] ?? 32)];
const threads = args[3] === undefined ? undefined : Number(args[3]);
if (
  !path ||
  !(p >= 1) ||
  !(n >= 2) ||
  !(Number.isInteger(depth) && depth >= 0) ||
  (threads !== undefined && !(Number.isInteger(threads) && threads >= 1))
) {
  process.stderr.write(
    'usage: llama-decode.mjs <file.gguf> <prompt tokens ≥ 1> <generated tokens ≥ 2> [cpu threads ≥ 1] [--depth=N ≥ 0]\n',
  );
  process.exit(2);
}
// build 'never': only the prebuilt binaries in node_modules, which must have Vulkan for the GPU.
const llama = await getLlama({
  gpu: threads === undefined ? 'vulkan' : false,
  build: 'never',
  progressLogs: false,
  logLevel: 'error',
});
const adapter = threads === undefined ? (await llama.getGpuDeviceNames()).join(', ') : `CPU, ${threads} threads`;
const model = await llama.loadModel({ modelPath: path, gpuLayers: threads === undefined ? 'max' : 0 });
const context = await model.createContext({
  contextSize: depth + p + n + 8,
  batchSize: Math.max(p, Math.min(depth, 512), 1),
  threads,
});
const sequence = context.getSequence();
// Any ids will do: past the control tokens, within every vocabulary of the kit's models (≥ 512).
const tokens = Array.from({ length: depth + p }, (_, i) => (i === 0 ? 1 : 3 + ((i * 7919) % 509)));
if (depth > 0) await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(0, depth));
const prompt = tokens.slice(depth);
const started = performance.now();
const at = [];
for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
  void token;
  at.push(performance.now());
  if (at.length >= n) break;
}
const prefillMs = at[0] - started;
const decodeMs = at[at.length - 1] - at[0];
process.stdout.write(
  JSON.stringify({ prefillTokS: p / (prefillMs / 1000), decodeTokS: (at.length - 1) / (decodeMs / 1000), adapter }) +
    '\n',
);
await context.dispose();
await model.dispose();
await llama.dispose();
