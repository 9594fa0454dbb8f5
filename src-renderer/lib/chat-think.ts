/**
 * Reasoning models write their thinking between <think> and </think> before the answer; the UI
 * shows it collapsed. Plain string work, so it is the same while streaming and afterwards.
 */

export type ContentPart = { kind: 'think'; text: string; closed: boolean } | { kind: 'answer'; text: string };

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * Splits a message into thinking and answer parts, in order. `streaming` holds back a tag still
 * being written ("<thi"), which would otherwise flash up as text for a token or two.
 */
export function splitThink(content: string, streaming = false): ContentPart[] {
  const parts: ContentPart[] = [];
  const answer = (text: string) => {
    if (text.trim() !== '') parts.push({ kind: 'answer', text });
  };
  let rest = streaming ? withoutPartialTag(content) : content;

  // Some chat templates (DeepSeek-R1's) write the opening tag into the prompt, so the model's
  // output starts inside the block and only its end is seen.
  const firstClose = rest.indexOf(CLOSE);
  const firstOpen = rest.indexOf(OPEN);
  if (firstClose !== -1 && (firstOpen === -1 || firstClose < firstOpen)) {
    parts.push({ kind: 'think', text: rest.slice(0, firstClose).trim(), closed: true });
    rest = rest.slice(firstClose + CLOSE.length);
  }

  for (let open = rest.indexOf(OPEN); open !== -1; open = rest.indexOf(OPEN)) {
    answer(rest.slice(0, open));
    const inside = rest.slice(open + OPEN.length);
    const close = inside.indexOf(CLOSE);
    if (close === -1) {
      parts.push({ kind: 'think', text: inside.trim(), closed: false });
      return parts;
    }
    parts.push({ kind: 'think', text: inside.slice(0, close).trim(), closed: true });
    rest = inside.slice(close + CLOSE.length);
  }
  answer(rest);
  return parts;
}

/** The answer without its thinking: what "Copy" puts on the clipboard. */
export function answerText(content: string): string {
  return splitThink(content)
    .filter((part) => part.kind === 'answer')
    .map((part) => part.text.trim())
    .join('\n\n');
}

export function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function withoutPartialTag(content: string): string {
  for (const tag of [OPEN, CLOSE]) {
    for (let length = tag.length - 1; length > 0; length--) {
      if (content.endsWith(tag.slice(0, length))) return content.slice(0, -length);
    }
  }
  return content;
}
