/** The context a new chat gets: the app's default, or less if the model was trained on less (null: neither known). */
export function newChatContext(defaultContext: number, trained: number | null): number;
export function newChatContext(defaultContext: number | null, trained: number | null): number | null;
export function newChatContext(defaultContext: number | null, trained: number | null): number | null {
  if (defaultContext === null) return trained;
  return trained === null ? defaultContext : Math.min(defaultContext, trained);
}
