/**
 * Constrained generation, token by token: which tokens may come next (a bit mask over the
 * vocabulary) and the matcher state after each chosen one. End-of-generation ids are allowed only
 * once the JSON is whole; tokens without bytes (control tokens) never are.
 */
import { advance, isComplete, matchBytes, start, type MatchState } from './json-matcher';
import { ANY_OBJECT, compileJsonSchema, type JsonNode } from './json-schema';
import { maskWords, type TokenTrie } from './token-trie';

/** What a generation's output must be: any JSON object (OpenAI's json_object), or a document valid for a JSON Schema. */
export type JsonConstraint = { kind: 'json' } | { kind: 'json-schema'; schema: unknown };

/** The node graph for a constraint; a schema outside the supported subset is a SchemaError. */
export function constraintGrammar(c: JsonConstraint): JsonNode {
  return c.kind === 'json' ? ANY_OBJECT : compileJsonSchema(c.schema);
}

export class ConstrainedTokens {
  private state: MatchState;
  private readonly words: Uint32Array<ArrayBuffer>;
  /** The one-thread state `words` holds the mask of, and whether any bit is set. */
  private maskedFor: MatchState[number] | null = null;
  private any = false;

  constructor(
    grammar: JsonNode,
    private readonly trie: TokenTrie,
    /** Ids that end the generation. */
    private readonly endIds: readonly number[],
  ) {
    this.state = start(grammar);
    this.words = new Uint32Array(maskWords(trie.size));
  }

  /** Whether the output so far is a whole document. */
  get complete(): boolean {
    return isComplete(this.state);
  }

  /** The ids allowed next, one bit each (a view that the next call overwrites); null when none is. */
  mask(): Uint32Array<ArrayBuffer> | null {
    // Inside a string or a number, a token often leaves the very same thread as before: same mask.
    const key = this.state.length === 1 ? this.state[0]! : null;
    if (key !== null && key === this.maskedFor) return this.any ? this.words : null;
    const w = this.words;
    w.fill(0);
    this.trie.allowed(this.state, advance, w);
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
    const next = bytes.length > 0 && !this.endIds.includes(id) ? matchBytes(this.state, bytes) : null;
    if (!next) throw new Error(`token ${id} does not continue the constrained output`);
    this.state = next;
  }
}
