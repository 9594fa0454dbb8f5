/** Saves an exported chat through the browser's own download (no server round trip, nothing remote). */
import type { ChatExport } from '../../src-preload/api';

export function downloadExport(file: ChatExport): void {
  const url = URL.createObjectURL(new Blob([file.content], { type: file.mimeType }));
  const link = document.createElement('a');
  link.href = url;
  link.download = file.fileName;
  link.click();
  // The download has started from the URL by the time the click is handled.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
