import { describe, expect, it } from 'vitest';
import { snippetParts } from '../../src-renderer/lib/chat-snippet';

describe('snippetParts', () => {
  it('marks the text between « and » as matches', () => {
    expect(snippetParts('…a «little» girl named «Lily»')).toEqual([
      { text: '…a ', match: false },
      { text: 'little', match: true },
      { text: ' girl named ', match: false },
      { text: 'Lily', match: true },
    ]);
  });

  it('is one plain part without marks', () => {
    expect(snippetParts('no match marks')).toEqual([{ text: 'no match marks', match: false }]);
  });
});
