/**
 * A JSON Schema "pattern" (and the string formats written as one) compiled to an automaton over
 * a string's characters, for the matcher to step as each character of a JSON string is read (after
 * its escape is decoded). The subset is llama.cpp's (json-schema-to-grammar): the pattern is
 * anchored, "^…$"; literals and escaped metacharacters, classes ("[a-z_]", "[^…]"), ".", groups
 * ("(…)", "(?:…)"), alternation and the quantifiers *, +, ?, {m}, {m,}, {m,n}; and \d \w \s (and
 * their negations), \t \n \r \f \v, \xHH, \uHHHH. Anything else (lookaround, backreferences,
 * \b, \p{…}, anchors inside) is a PatternError naming it: the constraint could not be held to.
 *
 * The automaton's states that cannot reach the end are removed, so that every state set the
 * matcher reaches can still be completed.
 */

export class PatternError extends Error {
  override readonly name = 'PatternError';
}

/** Inclusive code point ranges; `negated`: every code point outside them. */
interface CharSet {
  readonly ranges: readonly (readonly [number, number])[];
  readonly negated: boolean;
}

interface State {
  /** Character edges. */
  readonly edges: { set: CharSet; to: number }[];
  /** Empty edges. */
  readonly empty: number[];
}

export interface CharPattern {
  /** The states before any character (closed under empty edges), sorted. */
  readonly start: readonly number[];
  /** The states after character `c` from `states`; an empty list: no way on. */
  step(states: readonly number[], c: number): readonly number[];
  /** Whether some character in [lo, hi] has a way on from `states` (a character partly read). */
  stepsInRange(states: readonly number[], lo: number, hi: number): boolean;
  /** Whether the characters so far are a whole match. */
  accepts(states: readonly number[]): boolean;
}

/** The most state sets (and steps from one set) a pattern remembers. */
const MAX_CACHED_SETS = 4096;

/** The most automaton states a pattern may expand to ({m,n} copies its operand). */
export const MAX_PATTERN_STATES = 4000;

const DIGIT: [number, number][] = [[0x30, 0x39]];
const WORD: [number, number][] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: [number, number][] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x2028, 0x2029],
];
const METACHARS = '^$.[]()|{}*+?\\/-';

export function compilePattern(pattern: string): CharPattern {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.length < 2 || pattern.endsWith('\\$'))
    throw new PatternError('the pattern must start with "^" and end with "$" (it is matched whole)');
  return new Builder(pattern.slice(1, -1)).build();
}

/** A fragment of the automaton: its entry state and its exit state. */
type Fragment = [number, number];

class Builder {
  private readonly states: State[] = [];
  private i = 0;

  constructor(private readonly src: string) {}

  build(): CharPattern {
    const [entry, exit] = this.alternation();
    if (this.i < this.src.length) throw new PatternError(`unbalanced ")" at character ${this.i + 1} of the pattern`);
    return finish(this.states, entry, exit);
  }

  private state(): number {
    if (this.states.length >= MAX_PATTERN_STATES)
      throw new PatternError(`the pattern expands past ${MAX_PATTERN_STATES} states, the most Gufo compiles`);
    this.states.push({ edges: [], empty: [] });
    return this.states.length - 1;
  }

  private alternation(): Fragment {
    const branches = [this.sequence()];
    while (this.src[this.i] === '|') {
      this.i++;
      branches.push(this.sequence());
    }
    if (branches.length === 1) return branches[0]!;
    const entry = this.state();
    const exit = this.state();
    for (const [a, b] of branches) {
      this.states[entry]!.empty.push(a);
      this.states[b]!.empty.push(exit);
    }
    return [entry, exit];
  }

  private sequence(): Fragment {
    const entry = this.state();
    let exit = entry;
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const atomStart = this.i;
      let piece = this.atom();
      const atomEnd = this.i;
      piece = this.quantified(piece, atomStart, atomEnd);
      this.states[exit]!.empty.push(piece[0]);
      exit = piece[1];
    }
    return [entry, exit];
  }

  /** One atom; its source is src[start, end) (re-parsed to copy it for {m,n}). */
  private atom(): Fragment {
    const c = this.src[this.i]!;
    if (c === '(') {
      this.i++;
      if (this.src[this.i] === '?') {
        if (this.src[this.i + 1] !== ':')
          throw new PatternError(
            `"(?${this.src[this.i + 1] ?? ''}" (lookaround or a named group) is not supported in a pattern`,
          );
        this.i += 2;
      }
      const inner = this.alternation();
      if (this.src[this.i] !== ')') throw new PatternError('unbalanced "(" in the pattern');
      this.i++;
      return inner;
    }
    if (c === '[') return this.charEdge(this.charClass());
    if (c === '.') {
      this.i++;
      return this.charEdge({
        ranges: [
          [0x0a, 0x0a],
          [0x0d, 0x0d],
        ],
        negated: true,
      });
    }
    if (c === '\\') return this.charEdge(this.escape(false));
    if (c === '^' || c === '$') throw new PatternError(`"${c}" inside the pattern is not supported (only at its ends)`);
    if ('*+?{'.includes(c)) throw new PatternError(`"${c}" at character ${this.i + 2} of the pattern repeats nothing`);
    if (c === ']' || c === '}') throw new PatternError(`unbalanced "${c}" in the pattern`);
    const cp = this.src.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return this.charEdge({ ranges: [[cp, cp]], negated: false });
  }

  private charEdge(set: CharSet): Fragment {
    const a = this.state();
    const b = this.state();
    this.states[a]!.edges.push({ set, to: b });
    return [a, b];
  }

  private charClass(): CharSet {
    this.i++; // [
    const negated = this.src[this.i] === '^';
    if (negated) this.i++;
    const ranges: (readonly [number, number])[] = [];
    let first = true;
    for (;;) {
      if (this.i >= this.src.length) throw new PatternError('unbalanced "[" in the pattern');
      const c = this.src[this.i]!;
      if (c === ']' && !first) break;
      first = false;
      const lo = this.classChar();
      if (typeof lo !== 'number') {
        if (lo.negated) throw new PatternError('a negated class escape (\\D, \\W, \\S) inside "[…]" is not supported');
        ranges.push(...lo.ranges);
        continue;
      }
      if (this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        this.i++;
        const hi = this.classChar();
        if (typeof hi !== 'number') throw new PatternError('a range in "[…]" ends in a class escape');
        if (hi < lo)
          throw new PatternError(`the range "${String.fromCodePoint(lo)}-${String.fromCodePoint(hi)}" is out of order`);
        ranges.push([lo, hi]);
      } else ranges.push([lo, lo]);
    }
    this.i++; // ]
    return { ranges, negated };
  }

  /** One character in a class: a code point, or a class escape's set. */
  private classChar(): number | CharSet {
    if (this.src[this.i] === '\\') {
      const set = this.escape(true);
      const r = set.ranges[0]!;
      return !set.negated && set.ranges.length === 1 && r[0] === r[1] ? r[0] : set;
    }
    const cp = this.src.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  private escape(inClass: boolean): CharSet {
    const c = this.src[this.i + 1];
    if (c === undefined) throw new PatternError('the pattern ends in "\\"');
    this.i += 2;
    const one = (cp: number): CharSet => ({ ranges: [[cp, cp]], negated: false });
    const hex = (n: number): CharSet => {
      const digits = this.src.slice(this.i, this.i + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(digits))
        throw new PatternError(`"\\${c}" must be followed by ${n} hex digits in the pattern`);
      this.i += n;
      return one(parseInt(digits, 16));
    };
    switch (c) {
      case 'd':
        return { ranges: DIGIT, negated: false };
      case 'D':
        return { ranges: DIGIT, negated: true };
      case 'w':
        return { ranges: WORD, negated: false };
      case 'W':
        return { ranges: WORD, negated: true };
      case 's':
        return { ranges: SPACE, negated: false };
      case 'S':
        return { ranges: SPACE, negated: true };
      case 't':
        return one(9);
      case 'n':
        return one(10);
      case 'v':
        return one(11);
      case 'f':
        return one(12);
      case 'r':
        return one(13);
      case 'x':
        return hex(2);
      case 'u':
        return hex(4);
    }
    if (METACHARS.includes(c) || c === '"' || c === ' ' || (inClass && c === ']')) return one(c.charCodeAt(0));
    throw new PatternError(`"\\${c}" is not supported in a pattern`);
  }

  /** `piece` (parsed from src[start, end)) with the quantifier that follows it, if any. */
  private quantified(piece: Fragment, start: number, end: number): Fragment {
    const q = this.src[this.i];
    let min: number;
    let max: number;
    if (q === '*' || q === '+' || q === '?') {
      this.i++;
      [min, max] = q === '*' ? [0, Infinity] : q === '+' ? [1, Infinity] : [0, 1];
    } else if (q === '{') {
      const m = /^\{(\d*)(,?)(\d*)\}/.exec(this.src.slice(this.i));
      if (!m || (m[1] === '' && m[2] === '') || (m[1] === '' && m[3] === ''))
        throw new PatternError('a "{" in the pattern is not a repetition {m}, {m,} or {m,n}');
      this.i += m[0].length;
      min = m[1] === '' ? 0 : Number(m[1]);
      max = m[2] === '' ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (max < min) throw new PatternError(`the repetition ${m[0]} in the pattern is out of order`);
    } else return piece;
    if (this.src[this.i] === '?') this.i++; // lazy: the same strings match a whole pattern
    if ('*+?{'.includes(this.src[this.i] ?? '') && this.i < this.src.length)
      throw new PatternError(
        `a quantifier after a quantifier ("${this.src.slice(start, this.i + 1)}") is not supported`,
      );
    const after = this.i;
    const copy = (): Fragment => {
      this.i = start;
      const f = this.atom();
      this.i = end;
      return f;
    };
    const entry = this.state();
    let exit = entry;
    const link = (f: Fragment) => {
      this.states[exit]!.empty.push(f[0]);
      exit = f[1];
    };
    for (let k = 0; k < min; k++) link(k === 0 ? piece : copy());
    if (max === Infinity) {
      const loop = min === 0 ? piece : copy();
      this.states[exit]!.empty.push(loop[0]);
      this.states[loop[1]]!.empty.push(loop[0]);
      const out = this.state();
      this.states[exit]!.empty.push(out);
      this.states[loop[1]]!.empty.push(out);
      exit = out;
    } else {
      const out = this.state();
      for (let k = min; k < max; k++) {
        this.states[exit]!.empty.push(out);
        link(k === 0 ? piece : copy());
      }
      this.states[exit]!.empty.push(out);
      exit = out;
    }
    this.i = after;
    return [entry, exit];
  }
}

function inSet(set: CharSet, c: number): boolean {
  let hit = false;
  for (const [lo, hi] of set.ranges) if (c >= lo && c <= hi) hit = true;
  return hit !== set.negated;
}

/** Whether some code point in [lo, hi] is in `set`. */
function meetsRange(set: CharSet, lo: number, hi: number): boolean {
  if (!set.negated) return set.ranges.some(([a, b]) => a <= hi && b >= lo);
  // Outside the ranges: some point of [lo, hi] that no range covers.
  let next = lo;
  for (const [a, b] of [...set.ranges].sort((x, y) => x[0] - y[0])) {
    if (a > next) break;
    if (b >= next) next = b + 1;
    if (next > hi) return false;
  }
  return next <= hi;
}

function finish(states: readonly State[], entry: number, exit: number): CharPattern {
  // Live states: those from which the exit can be reached.
  const back: number[][] = states.map(() => []);
  states.forEach((s, i) => {
    for (const e of s.edges) back[e.to]!.push(i);
    for (const t of s.empty) back[t]!.push(i);
  });
  const live = new Set([exit]);
  const todo = [exit];
  while (todo.length > 0)
    for (const p of back[todo.pop()!]!)
      if (!live.has(p)) {
        live.add(p);
        todo.push(p);
      }
  const closure = (from: Iterable<number>): number[] => {
    const seen = new Set<number>();
    const stack = [...from].filter((s) => live.has(s));
    for (const s of stack) seen.add(s);
    while (stack.length > 0)
      for (const t of states[stack.pop()!]!.empty)
        if (live.has(t) && !seen.has(t)) {
          seen.add(t);
          stack.push(t);
        }
    return [...seen].sort((a, b) => a - b);
  };
  // State sets are interned, and each one's steps remembered (a lazily built DFA): the mask search
  // steps the same few sets through the same characters for every token of the vocabulary.
  const interned = new Map<string, readonly number[]>();
  const steps = new WeakMap<readonly number[], Map<number, readonly number[]>>();
  const intern = (set: number[]): readonly number[] => {
    const key = set.join(',');
    let found = interned.get(key);
    if (!found) {
      found = set;
      if (interned.size < MAX_CACHED_SETS) interned.set(key, found);
    }
    return found;
  };
  const none: readonly number[] = [];
  const start = intern(closure([entry]));
  if (start.length === 0) throw new PatternError('the pattern matches no string');
  return {
    start,
    step(set, c) {
      let memo = steps.get(set);
      const known = memo?.get(c);
      if (known) return known;
      const next: number[] = [];
      for (const s of set) for (const e of states[s]!.edges) if (inSet(e.set, c)) next.push(e.to);
      const result = next.length === 0 ? none : intern(closure(next));
      if (!memo) {
        memo = new Map();
        steps.set(set, memo);
      }
      if (memo.size < MAX_CACHED_SETS) memo.set(c, result);
      return result;
    },
    stepsInRange: (set, lo, hi) => set.some((s) => states[s]!.edges.some((e) => meetsRange(e.set, lo, hi))),
    accepts: (set) => set.includes(exit),
  };
}

const DATE = '[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])';
const TIME = '([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{3})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])';
const HEX = '[0-9a-fA-F]';
/** The string formats llama.cpp holds to, as patterns (its grammars for them, the same strings). */
export const FORMAT_PATTERNS: Readonly<Record<string, string>> = {
  date: `^${DATE}$`,
  time: `^${TIME}$`,
  'date-time': `^${DATE}T${TIME}$`,
  uuid: `^${HEX}{8}-${HEX}{4}-${HEX}{4}-${HEX}{4}-${HEX}{12}$`,
};
