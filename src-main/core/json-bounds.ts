/**
 * How deep a JSON value nests and how many values it holds, measured without recursion: JSON.parse
 * builds a value thousands of levels deep from a few kilobytes of brackets, and a recursive walk of
 * it (JSON.stringify, structuredClone, a schema compiler) would overflow the stack.
 */

export interface JsonBounds {
  /** Objects and arrays inside one another: [] and {"a": 1} are 1 deep, a scalar 0. */
  depth: number;
  /** Values in all, the outermost one included (object keys are not values). */
  values: number;
}

/** The first bound `value` goes past, or null when it keeps within both. */
export function jsonOverBounds(value: unknown, bounds: JsonBounds): keyof JsonBounds | null {
  let values = 1;
  // Only containers are stacked: a long list of scalars costs no memory here.
  const stack: { container: object; depth: number }[] = isContainer(value) ? [{ container: value, depth: 1 }] : [];
  while (stack.length > 0) {
    const { container, depth } = stack.pop()!;
    if (depth > bounds.depth) return 'depth';
    const children: unknown[] = Array.isArray(container) ? container : Object.values(container);
    values += children.length;
    if (values > bounds.values) return 'values';
    for (const child of children) if (isContainer(child)) stack.push({ container: child, depth: depth + 1 });
  }
  return null;
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
