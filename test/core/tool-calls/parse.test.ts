/**
 * Tool calls in each family's syntax, on the examples of the families' own documentation (Qwen's
 * and Hermes's function-calling docs, Meta's Llama 3.1 prompt format, Mistral's, OpenAI's harmony
 * guide): the content before a call stays content, the calls parse, and any chunking of the
 * streamed text gives the same result.
 */
import { describe, expect, it } from 'vitest';
import { HarmonyRewriter } from '../../../src-main/core/harmony';
import {
  forcedToolCall,
  splitToolCalls,
  TOOL_CALL_SYNTAX,
  ToolCallStream,
  type ParsedToolCall,
  type ToolCallDelta,
  type ToolCallSplit,
  type ToolCallSyntax,
} from '../../../src-main/core/tool-calls/index';
import { toolCallFamily } from '../../../src-main/core/tool-calls/syntax';
import { readHfVocab, LLAMA3_SPEC, QWEN3_SPEC } from '../../support/hf-vocab';
import { mulberry32 } from '../../support/random';

/**
 * `text` streamed in random pieces (as tokens come), assembled: content shown as it streams plus
 * what the end gives. The calls' streamed pieces (name first, then argument fragments) must join
 * into exactly the calls the end gives.
 */
function streamedInChunks(syntax: ToolCallSyntax, text: string, seed: number): ToolCallSplit {
  const rng = mulberry32(seed);
  const stream = new ToolCallStream(syntax);
  const sent: ParsedToolCall[] = [];
  const take = (deltas: readonly ToolCallDelta[]) => {
    for (const d of deltas) {
      if (d.name !== undefined) {
        expect(d.index).toBe(sent.length);
        sent.push({ name: d.name, arguments: '' });
      }
      sent[d.index]!.arguments += d.arguments;
    }
  };
  let shown = '';
  for (let at = 0; at < text.length;) {
    const n = 1 + rng.int(7);
    const piece = stream.push(text.slice(at, at + n));
    shown += piece.content;
    take(piece.calls);
    at += n;
  }
  const rest = stream.end();
  take(rest.deltas);
  expect(sent).toEqual(rest.calls ?? []);
  return { content: shown + rest.content, calls: rest.calls, complete: rest.complete };
}

function expectSplit(
  syntax: ToolCallSyntax,
  text: string,
  expected: Omit<ToolCallSplit, 'complete'> & { complete?: boolean },
): void {
  const whole = { complete: true, ...expected };
  expect(splitToolCalls(syntax, text)).toEqual(whole);
  for (let seed = 1; seed <= 20; seed++) expect(streamedInChunks(syntax, text, seed)).toEqual(whole);
}

/** `text` pushed a character at a time: the first call's name comes before its arguments end, and the arguments in many fragments. */
function expectStreamedAsWritten(syntax: ToolCallSyntax, text: string, name: string): void {
  const stream = new ToolCallStream(syntax);
  const fragments: string[] = [];
  let namedAt = -1;
  for (let at = 0; at < text.length; at++) {
    for (const d of stream.push(text[at]!).calls.filter((c) => c.index === 0)) {
      if (d.name !== undefined) {
        expect(d.name).toBe(name);
        namedAt = at;
      }
      if (d.arguments !== '') fragments.push(d.arguments);
    }
  }
  const rest = stream.end();
  fragments.push(...rest.deltas.filter((d) => d.index === 0).map((d) => d.arguments));
  expect(namedAt).toBeGreaterThanOrEqual(0);
  expect(namedAt).toBeLessThan(text.lastIndexOf('}'));
  expect(fragments.length).toBeGreaterThan(5);
  expect(fragments.join('')).toBe(rest.calls![0]!.arguments);
}

const args = (value: object) => JSON.stringify(value);

describe('tool-call syntax per family', () => {
  it('Hermes / Qwen 2.5 / Qwen 3: <tool_call> JSON </tool_call>, one or several, content before them kept', () => {
    // Qwen's function-calling guide (parallel calls of get_current_temperature and get_temperature_date).
    const text =
      'Let me check.\n<tool_call>\n{"name": "get_current_temperature", "arguments": {"location": "San Francisco, CA, USA"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_temperature_date", "arguments": {"location": "San Francisco, CA, USA", "date": "2024-10-01"}}\n</tool_call>';
    expectSplit(TOOL_CALL_SYNTAX.hermes, text, {
      content: 'Let me check.\n',
      calls: [
        { name: 'get_current_temperature', arguments: args({ location: 'San Francisco, CA, USA' }) },
        { name: 'get_temperature_date', arguments: args({ location: 'San Francisco, CA, USA', date: '2024-10-01' }) },
      ],
    });
    // Ended by EOS before the closing tag.
    expectSplit(TOOL_CALL_SYNTAX.hermes, '<tool_call>\n{"name": "f", "arguments": {}}', {
      content: '',
      calls: [{ name: 'f', arguments: '{}' }],
    });
  });

  it('Llama 3.1/3.2: a JSON object with "parameters", alone or after <|python_tag|>', () => {
    // Meta's Llama 3.1 prompt format, JSON-based tool calling.
    const json =
      '{"name": "get_current_conditions", "parameters": {"location": "San Francisco, CA", "unit": "Fahrenheit"}}';
    const call = {
      name: 'get_current_conditions',
      arguments: args({ location: 'San Francisco, CA', unit: 'Fahrenheit' }),
    };
    expectSplit(TOOL_CALL_SYNTAX.llama3, json, { content: '', calls: [call] });
    expectSplit(TOOL_CALL_SYNTAX.llama3, '<|python_tag|>' + json, { content: '', calls: [call] });
    expectSplit(TOOL_CALL_SYNTAX.llama3, `${json}; {"name": "f", "parameters": {}}`, {
      content: '',
      calls: [call, { name: 'f', arguments: '{}' }],
    });
  });

  it('Mistral: [TOOL_CALLS] and a JSON list of calls', () => {
    // Mistral's function-calling docs (v3 tokenizer).
    const text =
      '[TOOL_CALLS][{"name": "get_current_weather", "arguments": {"location": "Paris, France", "format": "celsius"}}]';
    expectSplit(TOOL_CALL_SYNTAX.mistral, text, {
      content: '',
      calls: [{ name: 'get_current_weather', arguments: args({ location: 'Paris, France', format: 'celsius' }) }],
    });
  });

  it('Mistral v11 (Magistral, Mistral Small 3.2, Devstral): [TOOL_CALLS]NAME[ARGS]{json} per call, with or without [CALL_ID]', () => {
    // Mistral's function-calling docs (v11 tokenizer): each call its own marker, the name, then the arguments.
    const weather = { name: 'get_current_weather', arguments: args({ location: 'Paris, France', format: 'celsius' }) };
    const one = '[TOOL_CALLS]get_current_weather[ARGS]{"location": "Paris, France", "format": "celsius"}';
    for (const syntax of [TOOL_CALL_SYNTAX['mistral-v11'], TOOL_CALL_SYNTAX.mistral]) {
      expectSplit(syntax, `Let me look.${one}`, { content: 'Let me look.', calls: [weather] });
    }
    const syntax = TOOL_CALL_SYNTAX['mistral-v11'];
    expectSplit(syntax, `${one}[TOOL_CALLS]get_time[ARGS]{}`, {
      content: '',
      calls: [weather, { name: 'get_time', arguments: '{}' }],
    });
    expectSplit(
      syntax,
      '[TOOL_CALLS]get_current_weather[CALL_ID]a1b2c3d4e[ARGS]{"location": "Paris, France", "format": "celsius"}',
      { content: '', calls: [weather] },
    );
    // The older list form is still read where the template has the new one.
    expectSplit(syntax, '[TOOL_CALLS][{"name": "get_time", "arguments": {}}]', {
      content: '',
      calls: [{ name: 'get_time', arguments: '{}' }],
    });
    expectStreamedAsWritten(
      syntax,
      '[TOOL_CALLS]search[ARGS]{"query": "say \\"hi\\"", "n": 1.50, "tags": [ "a", {"b": null} ]}',
      'search',
    );
    // Not a call: a name with a space.
    expectSplit(syntax, 'x [TOOL_CALLS]get weather[ARGS]{}', {
      content: 'x [TOOL_CALLS]get weather[ARGS]{}',
      calls: null,
    });
    // Cut short once named: a call, not complete.
    expectSplit(syntax, '[TOOL_CALLS]f[ARGS]{"a": [1, 2', {
      content: '',
      calls: [{ name: 'f', arguments: '{"a":[1,2' }],
      complete: false,
    });
  });

  it('Mistral v11 forced: the prompt ends with the marker, the name and [ARGS]; the output is held to the arguments schema', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const forced = forcedToolCall('mistral-v11', [{ name: 'weather', parameters }], true);
    expect(forced).toEqual({
      prefill: '[TOOL_CALLS]weather[ARGS]',
      constraint: { kind: 'json-schema', schema: parameters },
      opening: '[TOOL_CALLS]weather[ARGS]',
    });
    const stream = new ToolCallStream(TOOL_CALL_SYNTAX['mistral-v11'], forced.opening);
    stream.push('{"city": "Oslo"}');
    expect(stream.end()).toMatchObject({
      content: '',
      calls: [{ name: 'weather', arguments: '{"city":"Oslo"}' }],
      complete: true,
    });
    // Among several functions the name is generated too, held to one of them and [ARGS] (forced-choice.test.ts).
    expect(
      forcedToolCall(
        'mistral-v11',
        [
          { name: 'a', parameters },
          { name: 'b', parameters },
        ],
        true,
      ),
    ).toMatchObject({ prefill: '[TOOL_CALLS]', opening: '[TOOL_CALLS]' });
  });

  it('gpt-oss harmony: a commentary message to=functions.NAME, read after the harmony rewriter', () => {
    // OpenAI's harmony guide: reasoning, then the call (the stream stops at <|call|>).
    const raw =
      '<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"San Francisco"}';
    const rewriter = new HarmonyRewriter();
    const text = rewriter.push(raw) + rewriter.flush();
    expect(text).toBe(
      '<think>Need to use function get_weather.</think>to=functions.get_weather<|message|>{"location":"San Francisco"}',
    );
    expectSplit(TOOL_CALL_SYNTAX.harmony, text, {
      content: '<think>Need to use function get_weather.</think>',
      calls: [{ name: 'get_weather', arguments: args({ location: 'San Francisco' }) }],
    });
  });

  it('text that only looks like the start of a marker is shown; a call that does not parse stays content', () => {
    expectSplit(TOOL_CALL_SYNTAX.hermes, 'a < b and <tool', { content: 'a < b and <tool', calls: null });
    expectSplit(TOOL_CALL_SYNTAX.hermes, 'x <tool_call>{"name": 3}</tool_call>', {
      content: 'x <tool_call>{"name": 3}</tool_call>',
      calls: null,
    });
    expectSplit(TOOL_CALL_SYNTAX.mistral, '[TOOL_CALLS][{"nam', { content: '[TOOL_CALLS][{"nam', calls: null });
  });

  it('streams each call as it is written: the name once whole, then argument fragments that join into the final arguments', () => {
    // The model's own JSON, whitespace outside strings dropped (escapes and numbers as written).
    const raw = '{"query": "say \\"hi\\"\\n", "n": 1.50, "tags": [ "a", {"b": null} ]}';
    const compact = '{"query":"say \\"hi\\"\\n","n":1.50,"tags":["a",{"b":null}]}';
    const hermes = `Sure.<tool_call>\n{"name": "search", "arguments": ${raw}}\n</tool_call>`;
    expectSplit(TOOL_CALL_SYNTAX.hermes, hermes, { content: 'Sure.', calls: [{ name: 'search', arguments: compact }] });
    expectStreamedAsWritten(TOOL_CALL_SYNTAX.hermes, hermes, 'search');
    const llama = `<|python_tag|>{"name": "search", "parameters": ${raw}}`;
    expectSplit(TOOL_CALL_SYNTAX.llama3, llama, { content: '', calls: [{ name: 'search', arguments: compact }] });
    expectStreamedAsWritten(TOOL_CALL_SYNTAX.llama3, llama, 'search');
    const mistral = `[TOOL_CALLS][{"name": "search", "arguments": ${raw}}, {"name": "f", "arguments": {}}]`;
    expectSplit(TOOL_CALL_SYNTAX.mistral, mistral, {
      content: '',
      calls: [
        { name: 'search', arguments: compact },
        { name: 'f', arguments: '{}' },
      ],
    });
    expectStreamedAsWritten(TOOL_CALL_SYNTAX.mistral, mistral, 'search');
    const harmony = `to=functions.search<|message|>${raw}`;
    expectSplit(TOOL_CALL_SYNTAX.harmony, harmony, { content: '', calls: [{ name: 'search', arguments: compact }] });
    expectStreamedAsWritten(TOOL_CALL_SYNTAX.harmony, harmony, 'search');
    // A call without arguments takes none: "{}" comes with the end.
    expectSplit(TOOL_CALL_SYNTAX.hermes, '<tool_call>{"name": "now"}</tool_call>', {
      content: '',
      calls: [{ name: 'now', arguments: '{}' }],
    });
  });

  it('a call cut short once streamed stays a call, with the arguments as far as they were written (not complete)', () => {
    expectSplit(TOOL_CALL_SYNTAX.mistral, '[TOOL_CALLS][{"name": "f", "argu', {
      content: '',
      calls: [{ name: 'f', arguments: '' }],
      complete: false,
    });
    expectSplit(TOOL_CALL_SYNTAX.hermes, '<tool_call>\n{"name": "f", "arguments": {"a": [1, 2', {
      content: '',
      calls: [{ name: 'f', arguments: '{"a":[1,2' }],
      complete: false,
    });
  });

  it('reads the family from the real templates: Qwen 3 renders tools (Hermes), Llama 3 has none (fallback)', () => {
    const qwen = readHfVocab(QWEN3_SPEC).chatTemplate!;
    const llama3 = readHfVocab(LLAMA3_SPEC).chatTemplate!;
    expect(toolCallFamily(qwen, 'chatml')).toEqual({ family: 'hermes', rendersTools: true });
    expect(toolCallFamily(llama3, 'llama3')).toEqual({ family: 'hermes', rendersTools: false });
    expect(
      toolCallFamily('{% if tools %}…{% endif %}<|start_header_id|><|end_header_id|><|python_tag|>', 'llama3').family,
    ).toBe('llama3');
    expect(toolCallFamily('[INST] {{ tools }} [TOOL_CALLS]', 'mistral-v3').family).toBe('mistral');
    // Mistral Small 3.2's and Magistral's templates write each call as [TOOL_CALLS]NAME[ARGS]{…}.
    const v11 =
      "[AVAILABLE_TOOLS]{{ tools|tojson }}[/AVAILABLE_TOOLS]{%- for tool in message['tool_calls'] %}{{- '[TOOL_CALLS]' + tool['function']['name'] + '[ARGS]' + tool['function']['arguments'] }}{%- endfor %}";
    expect(toolCallFamily(v11, 'mistral')).toEqual({ family: 'mistral-v11', rendersTools: true });
  });
});
