/**
 * Constrained output that is one of several literal texts (a lead), then a JSON document of the
 * schema that lead chooses: a forced tool call whose syntax names the function outside its JSON
 * (gpt-oss's `NAME <|constrain|>json<|message|>{…}`, Mistral v11's `NAME[ARGS]{…}`). A byte
 * matcher like json-matcher's, so token masks are found the same way; a plain JSON constraint is
 * one lead with no text.
 */
import { advance, isComplete, start, type MatchState } from './json-matcher';
import type { JsonNode } from './json-schema';

export interface Lead {
  readonly text: Uint8Array;
  /** What follows the text. */
  readonly node: JsonNode;
}

/** Still in a lead's text (`pos` bytes read), or past it in the JSON that follows. */
type LeadThread = { readonly lead: Lead; readonly pos: number } | { readonly json: MatchState };

export type LeadState = readonly LeadThread[];

export function leadStart(leads: readonly Lead[]): LeadState {
  return leads.map((lead) => entered(lead, 0));
}

/** The thread `pos` bytes into `lead`: its JSON's start once the text is whole. */
function entered(lead: Lead, pos: number): LeadThread {
  return pos === lead.text.length ? { json: start(lead.node) } : { lead, pos };
}

export function leadAdvance(state: LeadState, byte: number): LeadState | null {
  const out: LeadThread[] = [];
  for (const th of state) {
    if ('json' in th) {
      const json = advance(th.json, byte);
      if (json) out.push({ json });
    } else if (th.lead.text[th.pos] === byte) out.push(entered(th.lead, th.pos + 1));
  }
  return out.length > 0 ? out : null;
}

export function leadComplete(state: LeadState): boolean {
  return state.some((th) => 'json' in th && isComplete(th.json));
}

/**
 * The state after a control token whose rendered text is `bytes` (it has no bytes for the trie):
 * allowed only where a lead's text goes on with exactly that text, never inside the JSON.
 */
export function leadControl(state: LeadState, bytes: Uint8Array): LeadState | null {
  const out: LeadThread[] = [];
  for (const th of state) {
    if ('json' in th || bytes.length === 0 || th.pos + bytes.length > th.lead.text.length) continue;
    if (bytes.every((b, i) => th.lead.text[th.pos + i] === b)) out.push(entered(th.lead, th.pos + bytes.length));
  }
  return out.length > 0 ? out : null;
}

/** The one JSON thread the state is (a mask cache key: inside a string a token often leaves it as it was), or null. */
export function leadJsonThread(state: LeadState): MatchState[number] | null {
  const th = state.length === 1 ? state[0]! : null;
  return th && 'json' in th && th.json.length === 1 ? th.json[0]! : null;
}
