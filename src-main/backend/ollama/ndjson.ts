import type { ServerResponse } from 'node:http';
import { sendJson } from '../../node/server/http-server';
import { toOpenAiError } from '../openai/errors';

/** A streamed answer as Ollama sends one: a JSON object per line, the last with "done": true (or an "error"). */
export class NdjsonWriter {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store' });
    // Each token goes out as it comes, not batched with the next.
    res.socket?.setNoDelay(true);
  }

  /** One line; nothing once the client has gone (the generation is being cancelled). */
  send(line: object): void {
    if (!this.res.destroyed) this.res.write(JSON.stringify(line) + '\n');
  }

  end(line: object): void {
    this.res.end(JSON.stringify(line) + '\n');
  }
}

/** A line of Ollama's status streams (pull, create): what is happening, and for a transfer how far it is. */
export interface StatusLine {
  status: string;
  digest?: string;
  total?: number;
  completed?: number;
}

/**
 * Runs `work` as Ollama's pull and create answer: streamed, each `report` a line and
 * `{"status":"success"}` the last (an error after the first line is sent as the last line);
 * without `stream`, only `{"status":"success"}` once it is done, or the error.
 */
export async function serveStatus(
  res: ServerResponse,
  stream: boolean,
  work: (report: (line: StatusLine) => void) => Promise<void>,
): Promise<number> {
  if (!stream) {
    await work(() => {});
    sendJson(res, 200, { status: 'success' });
    return 200;
  }
  const writer = new NdjsonWriter(res);
  try {
    await work((line) => writer.send(line));
  } catch (err) {
    const error = toOpenAiError(err);
    writer.end({ error: error.message });
    return error.status;
  }
  writer.end({ status: 'success' });
  return 200;
}
