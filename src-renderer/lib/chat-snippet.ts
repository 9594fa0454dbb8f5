/** Search snippets mark their matches between « and » (see SearchHit.snippet). */
export interface SnippetPart {
  text: string;
  match: boolean;
}

export function snippetParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  for (const [index, piece] of snippet.split(/«|»/).entries()) {
    // Odd pieces lie between a « and its ».
    if (piece !== '') parts.push({ text: piece, match: index % 2 === 1 });
  }
  return parts;
}
