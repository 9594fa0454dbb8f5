/**
 * How the CLI and the UI write the same facts, so they agree: sizes in binary units as llama.cpp
 * prints them ("4.07 GiB"), whole counts ("4,096"), and a model's file type. Tiny pure functions, no imports.
 */

/** Bytes as "512 B", "1.50 KiB", "23.4 MiB", "4.07 GiB" (three significant digits). */
/** 4096 → "4,096": token and byte counts written out whole. */
export function formatInteger(n: number): string {
  return n.toLocaleString('en-US');
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0
    ? `${value} B`
    : `${value.toFixed(Math.abs(value) < 10 ? 2 : Math.abs(value) < 100 ? 1 : 0)} ${units[unit]}`;
}

/**
 * The file type to show: general.file_type as llama.cpp names it, else the type of the largest
 * share of the tensors' bytes marked "(guessed)" (as llama.cpp marks a guessed type); null: no tensors.
 */
export function fileTypeLabel(fileType: string | null, typeMix: readonly { type: string }[]): string | null {
  if (fileType !== null) return fileType;
  const guess = guessedFileType(fileType, typeMix);
  return guess === null ? null : `${guess} (guessed)`;
}

/**
 * The type of the largest share of the tensors' bytes (`typeMix` is largest first) when
 * general.file_type does not say; null when it does, or when there are no tensors.
 */
export function guessedFileType(fileType: string | null, typeMix: readonly { type: string }[]): string | null {
  return fileType === null ? (typeMix[0]?.type ?? null) : null;
}
