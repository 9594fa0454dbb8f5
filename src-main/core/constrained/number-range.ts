/**
 * minimum / maximum / exclusiveMinimum / exclusiveMaximum held to exactly while a number is
 * written: for the text so far, whether some way of going on ends inside the range (a prefix with
 * none is refused, so a model can always finish), and whether the text as it is lies inside.
 * Arithmetic is exact (BigInt at a common decimal scale); the bounds are read as the shortest
 * decimals their JSON numbers print as. A bounded number is written without an exponent (a
 * bounded integer never has one either); no leading zeros, as JSON and llama.cpp's range
 * grammars have it. Like llama.cpp's, a number has at most MAX_DIGITS integer digits and
 * MAX_DIGITS fraction digits (so that a model cannot write digits forever).
 */

/** The most digits of a number's integer part, of its fraction and of its exponent (llama.cpp's "integral-part", "decimal-part"). */
export const MAX_DIGITS = 16;

export interface NumberRange {
  /** The bounds as decimal texts ("18", "-2.5", "1e+21"); null: none on that side. */
  readonly min: string | null;
  readonly minExclusive: boolean;
  readonly max: string | null;
  readonly maxExclusive: boolean;
}

/** An exact decimal: n / 10^scale. */
interface Dec {
  readonly n: bigint;
  readonly scale: number;
}

function parseDec(text: string): Dec {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) throw new Error(`not a decimal: ${text}`);
  const frac = m[3] ?? '';
  let n = BigInt(m[2]! + frac);
  let scale = frac.length - Number(m[4] ?? 0);
  if (scale < 0) {
    n *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { n: m[1] ? -n : n, scale };
}

const rescale = (d: Dec, scale: number): bigint => d.n * 10n ** BigInt(scale - d.scale);

/** An end of an interval: its value at the common scale (null: unbounded) and whether it belongs. */
interface End {
  readonly v: bigint | null;
  readonly in: boolean;
}

/** Whether the interval (lo, hi) meets the range, all at `scale`. */
function meets(lo: End, hi: End, r: ScaledRange): boolean {
  // The greater of the two lower ends and the lesser of the two upper ends.
  const low = greater(lo, r.lo);
  const high = lesser(hi, r.hi);
  if (low.v === null || high.v === null) return true;
  return low.v < high.v || (low.v === high.v && low.in && high.in);
}

function greater(a: End, b: End): End {
  if (a.v === null) return b;
  if (b.v === null) return a;
  if (a.v !== b.v) return a.v > b.v ? a : b;
  return { v: a.v, in: a.in && b.in };
}

function lesser(a: End, b: End): End {
  if (a.v === null) return b;
  if (b.v === null) return a;
  if (a.v !== b.v) return a.v < b.v ? a : b;
  return { v: a.v, in: a.in && b.in };
}

interface ScaledRange {
  readonly lo: End;
  readonly hi: End;
}

/** A number's text so far, read: sign, integer digits, whether a "." was written, fraction digits. */
interface Parts {
  readonly neg: boolean;
  readonly int: string;
  readonly dot: boolean;
  readonly frac: string;
}

function parts(text: string): Parts {
  const neg = text.startsWith('-');
  const body = neg ? text.slice(1) : text;
  const dot = body.indexOf('.');
  return dot < 0
    ? { neg, int: body, dot: false, frac: '' }
    : { neg, int: body.slice(0, dot), dot: true, frac: body.slice(dot + 1) };
}

export class RangeCheck {
  private readonly min: Dec | null;
  private readonly max: Dec | null;
  private readonly scale: number;

  private readonly range: NumberRange;

  constructor(
    range: NumberRange,
    private readonly integer: boolean,
  ) {
    let min = range.min === null ? null : parseDec(range.min);
    let max = range.max === null ? null : parseDec(range.max);
    if (integer) {
      // The whole numbers in the range: its bounds rounded inwards, inclusive.
      if (min) min = { n: floorDiv(min.n, min.scale) + (range.minExclusive || !whole(min) ? 1n : 0n), scale: 0 };
      if (max) max = { n: -floorDiv(-max.n, max.scale) - (range.maxExclusive || !whole(max) ? 1n : 0n), scale: 0 };
      range = { min: range.min, minExclusive: false, max: range.max, maxExclusive: false };
    }
    this.range = range;
    this.min = min;
    this.max = max;
    this.scale = Math.max(min?.scale ?? 0, max?.scale ?? 0);
  }

  /** Whether no number at all is in the range (checked when the schema is compiled). */
  empty(): boolean {
    return !this.live('-') && !this.live('0') && ![1, 2, 3, 4, 5, 6, 7, 8, 9].some((d) => this.live(String(d)));
  }

  private scaled(extra: number): ScaledRange {
    const s = this.scale + extra;
    return {
      lo: { v: this.min && rescale(this.min, s), in: !this.range.minExclusive },
      hi: { v: this.max && rescale(this.max, s), in: !this.range.maxExclusive },
    };
  }

  /** Whether `text` (a number's bytes so far, no exponent) can still go on to a number in the range. */
  live(text: string): boolean {
    const p = parts(text);
    if (p.int === '') return this.side(p.neg, { v: 0n, in: false }, { v: null, in: false }, 0);
    if (p.int.length > MAX_DIGITS) return false;
    if (p.frac.length >= MAX_DIGITS) return this.holds(text); // no digit more
    if (p.dot || p.int === '0') {
      // Every number that goes on from here lies in [v, v + 10^-k) (an integer's "0": just 0).
      const k = p.frac.length;
      const v = BigInt(p.int + p.frac);
      if (this.integer) return this.side(p.neg, { v, in: true }, { v, in: true }, k);
      return this.side(p.neg, { v, in: true }, { v: v + 1n, in: false }, k);
    }
    // Integer digits p: p·10^j up to (p + 1)·10^j, for every j ≥ 0 more digits.
    const base = BigInt(p.int);
    const r = this.scaled(0);
    const bound = p.neg ? r.lo.v : r.hi.v;
    const limit = bound === null ? null : bound < 0n ? -bound : bound;
    for (let j = 0n; p.int.length + Number(j) <= MAX_DIGITS; j++) {
      const lo = base * 10n ** j;
      const hi = (base + 1n) * 10n ** j;
      const ok = this.integer
        ? this.side(p.neg, { v: lo, in: true }, { v: hi - 1n, in: true }, 0)
        : this.side(p.neg, { v: lo, in: true }, { v: hi, in: false }, 0) ||
          this.side(p.neg, { v: lo, in: true }, { v: lo, in: true }, 0);
      if (ok) return true;
      if (limit === null) return true; // unbounded on this side: more digits reach it
      if (lo * 10n ** BigInt(this.scale) > limit) return false;
    }
    return false;
  }

  /** Whether the magnitudes [lo, hi) (at 10^-k, `neg`: their negatives) meet the range. */
  private side(neg: boolean, lo: End, hi: End, k: number): boolean {
    const r = this.scaled(k);
    const up = 10n ** BigInt(this.scale);
    const at = (e: End): End => (e.v === null ? e : { v: e.v * up, in: e.in });
    const a = at(lo);
    const b = at(hi);
    if (!neg) return meets(a, b, r);
    return meets({ v: b.v === null ? null : -b.v, in: b.in }, { v: a.v === null ? null : -a.v, in: a.in }, r);
  }

  /** Whether `text` (a whole number, no exponent) lies in the range. */
  holds(text: string): boolean {
    const p = parts(text);
    const v = BigInt(p.int + p.frac);
    return this.side(p.neg, { v, in: true }, { v, in: true }, p.frac.length);
  }
}

/** n / 10^scale rounded down. */
function floorDiv(n: bigint, scale: number): bigint {
  const d = 10n ** BigInt(scale);
  const q = n / d;
  return n % d !== 0n && n < 0n ? q - 1n : q;
}

const whole = (d: Dec): boolean => d.n % 10n ** BigInt(d.scale) === 0n;
