/** What a key press in a message editor means: Enter sends, Shift+Enter is a new line, Esc stops or cancels. */
export type EditorKey = 'submit' | 'escape' | null;

export function editorKey(event: Pick<KeyboardEvent, 'key' | 'shiftKey' | 'isComposing'>): EditorKey {
  // While an input method composes (Japanese, Chinese, …) Enter confirms the composition.
  if (event.isComposing) return null;
  if (event.key === 'Enter' && !event.shiftKey) return 'submit';
  if (event.key === 'Escape') return 'escape';
  return null;
}
