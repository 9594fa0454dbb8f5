import { describe, expect, it } from 'vitest';
import { editorKey } from '../../src-renderer/lib/chat-keys';

const key = (key: string, shiftKey = false, isComposing = false) => editorKey({ key, shiftKey, isComposing });

describe('editorKey', () => {
  it('sends on Enter and leaves Shift+Enter to add a line', () => {
    expect(key('Enter')).toBe('submit');
    expect(key('Enter', true)).toBeNull();
  });

  it('leaves Enter to an input method while it composes', () => {
    expect(key('Enter', false, true)).toBeNull();
  });

  it('reports Esc, and nothing for other keys', () => {
    expect(key('Escape')).toBe('escape');
    expect(key('a')).toBeNull();
  });
});
