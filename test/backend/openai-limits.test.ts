/**
 * The OpenAI-compatible API's bounds on what a client sends, over real HTTP: requests nested
 * thousands of levels deep (schemas among them) are 400s naming the limit rather than stack
 * overflows; a body announced as too large is refused before it arrives; API keys have a minimum
 * length. No request here reaches the engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SCHEMA_DEPTH } from '../../src-main/core/constrained/json-schema';
import { MAX_FIELD_DEPTH } from '../../src-main/backend/openai/request-fields';
import { API_KEY_CHARS } from '../../src-preload/api';
import { rawExchange } from '../support/raw-http';
import { errorOf, send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

let t: OpenAiTestServer;
beforeAll(async () => {
  t = await startOpenAiTestServer();
});
afterAll(() => t?.close());

const json = { 'content-type': 'application/json' };

/** A schema `levels` objects deep, as text (JSON.stringify itself would overflow on deeper ones). */
function nestedSchemaText(levels: number): string {
  return '{"type":"object","properties":{"a":'.repeat(levels) + '{"type":"string"}' + '}}'.repeat(levels);
}

async function chatError(bodyText: string): Promise<{ status: number; error: ReturnType<typeof errorOf> }> {
  const reply = await send(t.server.port, 'POST', '/v1/chat/completions', json, bodyText);
  return { status: reply.status, error: errorOf(reply.body) };
}

describe('request bounds', () => {
  it('answers a json_schema nested 3000 levels deep with a 400 naming the limit, not a 500', async () => {
    const body = `{"model":"stories260k","messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${nestedSchemaText(3000)}}}}`;
    const { status, error } = await chatError(body);
    expect(status).toBe(400);
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'response_format', code: 'nested_too_deep' });
    expect(error.message).toContain(`more than ${MAX_FIELD_DEPTH} deep`);
  });

  it('answers a schema past the schema depth limit, but within the request limit, naming the schema limit', async () => {
    const levels = MAX_SCHEMA_DEPTH / 2;
    expect(2 * levels + 1 + 3).toBeLessThanOrEqual(MAX_FIELD_DEPTH);
    const body = `{"model":"stories260k","messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${nestedSchemaText(levels)}}}}`;
    const { status, error } = await chatError(body);
    expect(status).toBe(400);
    expect(error).toMatchObject({
      type: 'invalid_request_error',
      param: 'response_format',
      code: 'invalid_json_schema',
    });
    expect(error.message).toContain(`more than ${MAX_SCHEMA_DEPTH} deep`);
  });

  it('answers deep enum values, message contents and extra fields with a 400 naming the field', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const enumBody = `{"model":"stories260k","messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"enum":[${deep}]}}}}`;
    expect(await chatError(enumBody)).toMatchObject({
      status: 400,
      error: { param: 'response_format', code: 'nested_too_deep' },
    });
    const contentBody = `{"model":"stories260k","messages":[{"role":"user","content":[${deep}]}]}`;
    expect(await chatError(contentBody)).toMatchObject({
      status: 400,
      error: { param: 'messages', code: 'nested_too_deep' },
    });
    // A field Gufo ignores is refused too: it would still be walked by whatever logs or copies the request.
    const extraBody = `{"model":"nope","messages":[{"role":"user","content":"Hi"}],"metadata":${deep}}`;
    expect(await chatError(extraBody)).toMatchObject({
      status: 400,
      error: { param: 'metadata', code: 'nested_too_deep' },
    });
    const completion = await send(
      t.server.port,
      'POST',
      '/v1/completions',
      json,
      `{"model":"stories260k","prompt":${deep}}`,
    );
    expect(completion.status).toBe(400);
    expect(errorOf(completion.body)).toMatchObject({ param: 'prompt', code: 'nested_too_deep' });
  });

  it('refuses a Content-Length over the body limit at once (413), without waiting for the body', async () => {
    const started = Date.now();
    // Headers only, and the first byte of a body announced as 100 MB.
    const answer = await rawExchange(
      t.server.port,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${t.server.port}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{`,
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(errorOf(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      type: 'invalid_request_error',
      code: 'request_too_large',
    });
  });
});

describe('API key length', () => {
  it(`refuses a key shorter than ${API_KEY_CHARS.min} characters in the settings, naming the minimum`, async () => {
    const api = t.backend.api;
    const short = 'k'.repeat(API_KEY_CHARS.min - 1);
    await expect(api.updateOpenAiServerSettings({ apiKey: short })).rejects.toThrow(
      `setting "openAiServer.apiKey" must be null (no key) or ${API_KEY_CHARS.min} to ${API_KEY_CHARS.max}`,
    );
    expect((await api.openAiServerStatus()).settings.apiKey).toBeNull();
    const enough = 'k'.repeat(API_KEY_CHARS.min);
    try {
      expect((await api.updateOpenAiServerSettings({ apiKey: enough })).settings.apiKey).toBe(enough);
    } finally {
      await api.updateOpenAiServerSettings({ apiKey: null });
    }
  });
});
