/**
 * Constrained generation, token by token: which tokens may come next (a bit mask over the
 * vocabulary) and the matcher state after each chosen one. End-of-generation ids are allowed only
 * once the JSON is whole; tokens without bytes (control tokens) only where a lead's text
 * (lead-matcher.ts) goes on with their rendered text.
 */
import { ANY_OBJECT, compileJsonSchema, type JsonNode } from './json-schema';
import {
  leadAdvance,
  leadComplete,
  leadControl,
  leadJsonThread,
  leadStart,
  type Lead,
  type LeadState,
} from './lead-matcher';
import { maskWords, type TokenTrie } from './token-trie';

/**
 * What a generation's output must be: any JSON object (OpenAI's json_object), a document valid for
 * a JSON Schema, or one of several lead texts followed by a document valid for that lead's schema.
 */
export type JsonConstraint =
  | { kind: 'json' }
  | { kind: 'json-schema'; schema: unknown }
  | { kind: 'lead-json-schema'; leads: readonly { text: string; schema: unknown }[] };

/** The node graph for a JSON constraint; a schema outside the supported subset is a SchemaError. */
export function constraintGrammar(c: JsonConstraint): JsonNode {
  if (c.kind === 'lead-json-schema')
    throw new Error('a lead-json-schema constraint has one grammar per lead (constraintLeads)');
  return c.kind === 'json' ? ANY_OBJECT : compileJsonSchema(c.schema);
}

/** The leads of any constraint (a JSON one: a single lead without text). */
export function constraintLeads(c: JsonConstraint): Lead[] {
  if (c.kind !== 'lead-json-schema') return [{ text: new Uint8Array(0), node: constraintGrammar(c) }];
  const utf8 = new TextEncoder();
  return c.leads.map((l) => ({ text: utf8.encode(l.text), node: compileJsonSchema(l.schema) }));
}

export class ConstrainedTokens {
  private state: LeadState;
  private readonly words: Uint32Array<ArrayBuffer>;
  /** The one-thread JSON state `words` holds the mask of, and whether any bit is set. */
  private maskedFor: object | null = null;
  private any = false;

  constructor(
    grammar: JsonNode | readonly Lead[],
    private readonly trie: TokenTrie,
    /** Ids that end the generation. */
    private readonly endIds: readonly number[],
  ) {
    this.state = leadStart(Array.isArray(grammar) ? grammar : [{ text: new Uint8Array(0), node: grammar as JsonNode }]);
    this.words = new Uint32Array(maskWords(trie.size));
  }

  /** Whether the output so far is a whole document. */
  get complete(): boolean {
    return leadComplete(this.state);
  }

  /** The ids allowed next, one bit each (a view that the next call overwrites); null when none is. */
  mask(): Uint32Array<ArrayBuffer> | null {
    // Inside a string or a number, a token often leaves the very same thread as before: same mask.
    const key = leadJsonThread(this.state);
    if (key !== null && key === this.maskedFor) return this.any ? this.words : null;
    const w = this.words;
    w.fill(0);
    this.trie.allowed(this.state, leadAdvance, w);
    for (const c of this.trie.controls) if (leadControl(this.state, c.bytes)) w[c.id >>> 5]! |= 1 << (c.id & 31);
    const complete = this.complete;
    for (const id of this.endIds) {
      if (id < 0 || id >= this.trie.size) continue;
      if (complete) w[id >>> 5]! |= 1 << (id & 31);
      else w[id >>> 5]! &= ~(1 << (id & 31));
    }
    this.maskedFor = key;
    this.any = w.some((x) => x !== 0);
    return this.any ? w : null;
  }

  /** Moves past a chosen token, which must be one mask() allowed (an end id is not accepted: the generation is over). */
  accept(id: number): void {
    const bytes = this.trie.bytes(id);
    const control = bytes.length === 0 ? this.trie.controls.find((c) => c.id === id) : undefined;
    const next = this.endIds.includes(id)
      ? null
      : control
        ? leadControl(this.state, control.bytes)
        : bytes.length > 0
          ? matchLead(this.state, bytes)
          : null;
    if (!next) throw new Error(`token ${id} does not continue the constrained output`);
    this.state = next;
  }
}

function matchLead(state: LeadState, bytes: Uint8Array): LeadState | null {
  let s: LeadState | null = state;
  for (let i = 0; i < bytes.length && s; i++) s = leadAdvance(s, bytes[i]!);
  return s;
}
