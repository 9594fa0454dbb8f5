/**
 * The quantize worker thread: encodes the chunks the main thread sends (pool.ts) and sends the
 * bytes back, transferred, not copied. An error goes back as a message; the pool names the tensor.
 */
import { parentPort } from 'node:worker_threads';
import { quantizeChunk, type ChunkJob } from './chunk';

export interface WorkerRequest {
  id: number;
  job: ChunkJob;
}

export type WorkerReply = { id: number; bytes: Uint8Array; squaredError: number } | { id: number; error: string };

const port = parentPort;
if (!port) throw new Error('the quantize worker runs in a worker thread');

port.on('message', ({ id, job }: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    const { bytes, squaredError } = quantizeChunk(job);
    reply = { id, bytes, squaredError };
  } catch (err) {
    reply = { id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply, 'bytes' in reply ? [reply.bytes.buffer as ArrayBuffer] : []);
});
