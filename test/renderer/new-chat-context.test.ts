import { describe, expect, it } from 'vitest';
import { newChatContext } from '../../src-renderer/lib/new-chat-context';

describe('newChatContext', () => {
  it("takes the app's default, or less if the model was trained on less", () => {
    expect(newChatContext(2048, 128)).toBe(128);
    expect(newChatContext(2048, 4096)).toBe(2048);
    expect(newChatContext(2048, null)).toBe(2048);
  });

  it('falls back to what is known while the settings are still loading', () => {
    expect(newChatContext(null, 4096)).toBe(4096);
    expect(newChatContext(null, null)).toBeNull();
  });
});
