/**
 * JSON stored in a TEXT column. A value that does not parse (a corrupt row, a hand edit) is an
 * error naming the table, row and column, never a silent default.
 */
export class CorruptRowError extends Error {
  override readonly name = 'CorruptRowError';
}

export function parseJsonColumn<T>(
  text: string | null,
  where: { table: string; id: number | string; column: string },
): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CorruptRowError(
      `the database row ${where.table} ${where.id} has unreadable ${where.column} (not JSON); delete or fix that row`,
    );
  }
}
