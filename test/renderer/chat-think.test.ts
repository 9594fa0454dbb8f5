import { describe, expect, it } from 'vitest';
import { answerText, countWords, splitThink } from '../../src-renderer/lib/chat-think';

describe('splitThink', () => {
  it('separates a closed think block from the answer after it', () => {
    expect(splitThink('<think>\nThe user greets me.\n</think>\n\nHello!')).toEqual([
      { kind: 'think', text: 'The user greets me.', closed: true },
      { kind: 'answer', text: '\n\nHello!' },
    ]);
  });

  it('shows an unclosed block, while the model is still thinking, as open', () => {
    expect(splitThink('<think>Let me count: one, two')).toEqual([
      { kind: 'think', text: 'Let me count: one, two', closed: false },
    ]);
  });

  it('takes text before a lone </think> as thinking (templates that open the block in the prompt)', () => {
    expect(splitThink('Plan the answer.</think>The answer.')).toEqual([
      { kind: 'think', text: 'Plan the answer.', closed: true },
      { kind: 'answer', text: 'The answer.' },
    ]);
  });

  it('keeps text without think tags as one answer, and nothing for an empty message', () => {
    expect(splitThink('Just text, **bold**.')).toEqual([{ kind: 'answer', text: 'Just text, **bold**.' }]);
    expect(splitThink('')).toEqual([]);
  });

  it('keeps every block and answer in order', () => {
    const parts = splitThink('Intro <think>a</think> middle <think>b</think> end');
    expect(parts.map((p) => [p.kind, p.text.trim()])).toEqual([
      ['answer', 'Intro'],
      ['think', 'a'],
      ['answer', 'middle'],
      ['think', 'b'],
      ['answer', 'end'],
    ]);
  });

  it('holds back a tag still being streamed, but not in a finished message', () => {
    expect(splitThink('Hello <thi', true)).toEqual([{ kind: 'answer', text: 'Hello ' }]);
    expect(splitThink('<think>hmm</thi', true)).toEqual([{ kind: 'think', text: 'hmm', closed: false }]);
    expect(splitThink('a < b', false)).toEqual([{ kind: 'answer', text: 'a < b' }]);
    expect(splitThink('x <', false)).toEqual([{ kind: 'answer', text: 'x <' }]);
  });
});

describe('answerText', () => {
  it('is the message without its thinking', () => {
    expect(answerText('<think>private</think>\n\nThe answer.')).toBe('The answer.');
    expect(answerText('No thinking here.')).toBe('No thinking here.');
  });
});

describe('countWords', () => {
  it('counts words separated by any white space', () => {
    expect(countWords(' one two\nthree\tfour  ')).toBe(4);
    expect(countWords('')).toBe(0);
  });
});
