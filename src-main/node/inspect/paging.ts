/** Offsets and page sizes of the inspector's paged lists, checked so a bad request gets a clear error. */

/** The largest page any list hands out at once. */
export const MAX_PAGE = 500;

export interface PageBounds {
  offset: number;
  limit: number;
}

export function pageBounds(query: { offset?: number; limit?: number }, defaultLimit: number): PageBounds {
  const offset = query.offset ?? 0;
  const limit = query.limit ?? defaultLimit;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`offset must be a whole number ≥ 0, got ${offset}`);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE)
    throw new Error(`limit must be a whole number from 1 to ${MAX_PAGE}, got ${limit}`);
  return { offset, limit };
}

/** The page of `items` that `bounds` selects. */
export function slicePage<T>(items: readonly T[], bounds: PageBounds): T[] {
  return items.slice(bounds.offset, bounds.offset + bounds.limit);
}
