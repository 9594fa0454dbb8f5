/** An output stream split into its leading reasoning block and the answer, whatever the pieces it comes in. */
import { describe, expect, it } from 'vitest';
import { HarmonyRewriter } from '../../src-main/core/harmony';
import { templateThinks } from '../../src-main/core/chat-template';
import { promptOpensThinking, ReasoningSplitter, type ReasoningPiece } from '../../src-main/core/reasoning';

function split(pieces: readonly string[], opened = false): ReasoningPiece & { steps: ReasoningPiece[] } {
  const splitter = new ReasoningSplitter(opened);
  const steps = [...pieces.map((p) => splitter.push(p)), splitter.end()];
  return {
    reasoning: steps.map((s) => s.reasoning).join(''),
    content: steps.map((s) => s.content).join(''),
    steps,
  };
}

/** Every way of cutting `text` in two, three and one-character pieces. */
function cuts(text: string): string[][] {
  const out: string[][] = [[text], Array.from(text)];
  for (let i = 0; i <= text.length; i++) {
    out.push([text.slice(0, i), text.slice(i)]);
    for (let j = i; j <= text.length; j += 3) out.push([text.slice(0, i), text.slice(i, j), text.slice(j)]);
  }
  return out;
}

const QWEN = '<think>\nThe user says hi.\nGreet back.\n</think>\n\nHello there!';

describe('ReasoningSplitter', () => {
  it('splits a leading <think> block from the answer, trimming the whitespace around both, at any cut', () => {
    for (const pieces of cuts(QWEN)) {
      const { reasoning, content } = split(pieces);
      expect({ reasoning, content, pieces }).toEqual({
        reasoning: 'The user says hi.\nGreet back.',
        content: 'Hello there!',
        pieces,
      });
    }
  });

  it('streams the reasoning as it comes, holding back only a tag being written and whitespace before it', () => {
    const { steps } = split(['<think>One', ' two', '\n</thi', 'nk>\n\nAnswer', ' more']);
    expect(steps).toEqual([
      { reasoning: 'One', content: '' },
      { reasoning: ' two', content: '' },
      { reasoning: '', content: '' },
      { reasoning: '', content: 'Answer' },
      { reasoning: '', content: ' more' },
      { reasoning: '', content: '' },
    ]);
  });

  it('starts inside the block when the prompt opened it (DeepSeek-R1): all text is reasoning until </think>', () => {
    for (const pieces of cuts('\nWeighing it.\n</think>\n\nDone.')) {
      const { reasoning, content } = split(pieces, true);
      expect({ reasoning, content }).toEqual({ reasoning: 'Weighing it.', content: 'Done.' });
    }
    expect(split(['Cut off mid-thought  '], true)).toMatchObject({ reasoning: 'Cut off mid-thought', content: '' });
  });

  it('leaves an output without a leading block as it is, whitespace and a later <think> included', () => {
    for (const text of [
      '  Plain answer.',
      'Say <think> here </think> then',
      '<thin',
      '\n\n',
      '<thinking>no</thinking>',
    ]) {
      for (const pieces of cuts(text)) expect(split(pieces)).toMatchObject({ reasoning: '', content: text });
    }
  });

  it('says whether the output so far is still reasoning (its closing tag and the blank lines after it included)', () => {
    const splitter = new ReasoningSplitter(false);
    const states = ['<thi', 'nk>Hm', '</think>', '\n\n', 'Yes'].map((p) => (splitter.push(p), splitter.reasoning));
    expect(states).toEqual([false, true, true, true, false]);
    expect(new ReasoningSplitter(true).reasoning).toBe(true);
  });

  it('keeps a block never closed as reasoning, and an empty block as nothing', () => {
    expect(split(['<think>still going\n'])).toMatchObject({ reasoning: 'still going', content: '' });
    expect(split(['<think>\n\n</think>\n\nOnly the answer'])).toMatchObject({
      reasoning: '',
      content: 'Only the answer',
    });
  });

  it("splits gpt-oss's channels once harmony.ts has rewritten them", () => {
    const rewriter = new HarmonyRewriter();
    const text =
      rewriter.push(
        '<|channel|>analysis<|message|>Think first.<|end|><|start|>assistant<|channel|>final<|message|>Answer.',
      ) + rewriter.flush();
    expect(split([text])).toMatchObject({ reasoning: 'Think first.', content: 'Answer.' });
  });
});

describe('the prompt and the template', () => {
  it('a prompt ending with <think> (and whitespace) opens the block; one that closed it does not', () => {
    expect(promptOpensThinking('<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(promptOpensThinking('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(false);
    expect(promptOpensThinking('<|im_start|>assistant\n')).toBe(false);
  });

  it('a template that writes both tags thinks', () => {
    const custom = (text: string) => ({ name: 'custom', text });
    expect(templateThinks(custom("{{ '<think>\\n' + reasoning_content + '\\n</think>' }}"))).toBe(true);
    expect(templateThinks(custom('{% if enable_thinking is false %}{% endif %}'))).toBe(true);
    expect(templateThinks({ name: 'gpt-oss', text: '{{ messages[0].content }}' })).toBe(true);
    expect(templateThinks(custom('{{ messages[0].content }}'))).toBe(false);
  });
});
