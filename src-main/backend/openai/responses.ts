/**
 * `POST /v1/responses` (OpenAI's Responses API, stateless): the request read into a chat request
 * (responses-request.ts), prompted, planned, generated and split into text and tool calls exactly
 * as `/v1/chat/completions` does, and answered as a response object, or streamed as its typed
 * events: response.created, response.in_progress, the items' events (responses-output.ts), then
 * response.completed (response.incomplete when the length limit cut it), each with its
 * sequence_number. An error after the stream began is an `error` event and `response.failed`.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../../node/server/http-server';
import { chatAnswer, chatPrompt } from './chat-completions';
import { toOpenAiError, type OpenAiError } from './errors';
import { generate, type Generated } from './generation';
import { parseResponses, type ResponsesRequest } from './responses-request';
import { ResponseOutput, type OutputItem, type ResponseEvent } from './responses-output';
import { CLIENT_LEFT, withGenerationPlan } from './serve-generation';
import type { OpenAiService } from './service';
import { SseWriter } from './sse';
import type { ToolAnswer } from './tools';

type Status = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export async function serveResponses(
  service: OpenAiService,
  body: unknown,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<number> {
  const request = parseResponses(body);
  const model = await service.resolve(request.model);
  return withGenerationPlan(
    service,
    model,
    request,
    (text) => chatPrompt(text, request),
    signal,
    async (text, plan) => {
      const head = { id: `resp_${randomBytes(12).toString('hex')}`, created_at: Math.floor(Date.now() / 1000) };
      const response = (status: Status, output: OutputItem[], generated: Generated | null, error?: OpenAiError) =>
        responseObject(head, model.id, request, status, output, generated, error);
      const tools = chatAnswer(request);

      if (!request.stream) {
        const generated = await generate(service, text, plan, signal);
        if (!generated) return CLIENT_LEFT;
        const output = new ResponseOutput();
        write(output, tools, generated);
        const items = ended(output, tools, generated);
        sendJson(res, 200, response(statusOf(generated), items, generated));
        return 200;
      }

      // The stream opens with the first event, so that a request refused before it (a full queue,
      // a model that fails to load) still gets its HTTP status.
      let stream: SseWriter | null = null;
      let sequence = 0;
      const send = (event: ResponseEvent) => stream!.event({ ...event, sequence_number: sequence++ });
      const emit = (event: ResponseEvent) => {
        if (!stream) {
          stream = new SseWriter(res);
          const opening = response('in_progress', [], null);
          send({ type: 'response.created', response: opening });
          send({ type: 'response.in_progress', response: opening });
        }
        send(event);
      };
      const output = new ResponseOutput(emit);
      try {
        const generated = await generate(service, text, plan, signal, (piece) => write(output, tools, piece));
        if (!generated) return CLIENT_LEFT;
        const items = ended(output, tools, generated);
        const status = statusOf(generated);
        emit({ type: `response.${status}`, response: response(status, items, generated) });
        stream!.close();
        return 200;
      } catch (err) {
        if (!stream) throw err;
        const error = toOpenAiError(err);
        send({ type: 'error', code: error.code, message: error.message, param: error.param });
        send({ type: 'response.failed', response: response('failed', output.items, null, error) });
        (stream as SseWriter).close();
        return error.status;
      }
    },
  );
}

/** Answer text into the output, its reasoning first: with tools, split into content and calls as Chat Completions splits it. */
function write(
  output: ResponseOutput,
  tools: ToolAnswer | null,
  { text, reasoning }: { text: string; reasoning: string },
): void {
  output.reasoning(reasoning);
  if (!tools) return output.text(text);
  const { content, calls } = tools.pushPiece(text);
  output.text(content);
  calls.forEach((call) => output.call(call));
}

/** The answer ended: the text the parser held back, the calls' last pieces, and the items. */
function ended(output: ResponseOutput, tools: ToolAnswer | null, generated: Generated): OutputItem[] {
  if (tools) {
    const rest = tools.end();
    output.text(rest.content);
    rest.deltas.forEach((call) => output.call(call));
  }
  return output.end(generated.finishReason === 'length');
}

function statusOf(generated: Generated): 'completed' | 'incomplete' {
  return generated.finishReason === 'length' ? 'incomplete' : 'completed';
}

/** The response object, with what it repeats of the request as OpenAI's does. Nothing is stored. */
function responseObject(
  head: { id: string; created_at: number },
  model: string,
  request: ResponsesRequest,
  status: Status,
  output: OutputItem[],
  generated: Generated | null,
  error?: OpenAiError,
): object {
  return {
    ...head,
    object: 'response',
    status,
    background: false,
    error: error ? { code: error.code, message: error.message } : null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    model,
    output,
    previous_response_id: null,
    store: false,
    truncation: 'disabled',
    metadata: {},
    ...request.echo,
    usage: generated
      ? {
          input_tokens: generated.promptTokens,
          input_tokens_details: { cached_tokens: generated.cachedTokens },
          output_tokens: generated.completionTokens,
          output_tokens_details: { reasoning_tokens: generated.reasoningTokens },
          total_tokens: generated.promptTokens + generated.completionTokens,
        }
      : null,
  };
}
