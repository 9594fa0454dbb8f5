/** "Did you mean …?": the names closest to one the user mistyped (a model, an option, a command). */

/** Edit distance, with a name that contains the other (of 3 characters or more) counted as one edit. */
export function nameDistance(a: string, b: string): number {
  if (a === b) return 0;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  if (short.length >= 3 && long.includes(short)) return 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * Up to three of `candidates` close to `query`, closest first: within 2 edits, or a third of the
 * query's length. `distanceOf` measures a candidate (default: nameDistance to its text).
 */
export function closest<T>(
  query: string,
  candidates: readonly T[],
  text: (candidate: T) => string,
  distanceOf: (candidate: T) => number = (c) => nameDistance(query, text(c)),
): string[] {
  return candidates
    .map((c) => ({ name: text(c), distance: distanceOf(c) }))
    .filter((c) => c.distance <= Math.max(2, Math.floor(query.length / 3)))
    .sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : 1))
    .slice(0, 3)
    .map((c) => c.name);
}

/** "a", "a or b", "a, b or c". */
export function orList(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}
