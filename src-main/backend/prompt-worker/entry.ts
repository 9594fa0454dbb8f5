/**
 * The prompt worker thread: renders and tokenizes large prompts for the back end, so that the
 * event loop that serves the UI, /api and /metrics never waits on them. Keeps the tokenizers of
 * the last few model files open.
 */
import { statSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { ModelTexts } from '../openai/model-texts';
import { runPromptJob, type PromptJobReply, type PromptJobRequest } from './jobs';

const port = parentPort;
if (!port) throw new Error('the prompt worker runs in a worker thread');
const texts = new ModelTexts(2);

const answer = async ({ id, path, job }: PromptJobRequest): Promise<void> => {
  let reply: PromptJobReply;
  try {
    reply = { id, result: await texts.use(path, statSync(path).mtimeMs, (text) => runPromptJob(text, job)) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { id, error: { name: e.name, message: e.message } };
  }
  port.postMessage(reply);
};

port.on('message', (request: PromptJobRequest) => void answer(request));
