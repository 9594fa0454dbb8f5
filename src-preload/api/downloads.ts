/**
 * Downloads: GGUF files fetched over HTTP(S) into the data dir's models/ folder, resumable (HTTP
 * ranges) after a dropped connection or a restart, checked (SHA-256, GGUF header) before they join
 * the library. Progress comes as 'download' events.
 */

export type DownloadStatus =
  /** Waiting for a free slot (only a few downloads run at once). */
  | 'queued'
  | 'running'
  /** Stopped by the user or by Gufo closing; the bytes so far are kept for resuming. */
  | 'paused'
  /** All bytes are in: checking the SHA-256 and the GGUF header. */
  | 'verifying'
  | 'done'
  | 'failed'
  | 'cancelled';

export interface DownloadRequest {
  /** An http(s) URL, or `hf://<org>/<repo>/<path/file.gguf>` (optionally `<repo>@<revision>`), from HF_ENDPOINT. */
  url: string;
  /** Expected SHA-256 (64 hex digits); without it, the one the server publishes (Hugging Face) is checked. */
  sha256?: string;
}

export interface DownloadView {
  id: number;
  /** As given (an hf:// URL stays one). */
  url: string;
  fileName: string;
  /** Where the file goes once verified. */
  path: string;
  status: DownloadStatus;
  /** Bytes on disk so far. */
  bytes: number;
  /** Null until the server says. */
  total: number | null;
  /** Recent speed while running, else null. */
  bytesPerSecond: number | null;
  /** Seconds left at the recent speed, null when unknown. */
  etaSeconds: number | null;
  /** The SHA-256 the file must have, and where it comes from; null when neither given nor published. */
  sha256: string | null;
  sha256Source: 'given' | 'published' | null;
  /** Why it failed. */
  error: string | null;
  /** The library entry of the finished file. */
  modelId: number | null;
  createdAt: string;
  updatedAt: string;
  /**
   * Orders the views of one download: a later one has a larger revision. Answers and events travel
   * apart (an answer can arrive after the event of a later change), so keep the view with the larger.
   */
  revision: number;
}

export interface DownloadsApi {
  /**
   * Queues a download into the models folder and answers at once. The same URL again resumes its
   * unfinished download instead of starting over.
   */
  startDownload(request: DownloadRequest): Promise<DownloadView>;
  /** Newest first. */
  listDownloads(): Promise<DownloadView[]>;
  /** Stops it, keeping the bytes so far. */
  pauseDownload(id: number): Promise<DownloadView>;
  /** Continues a paused or failed download from where it stopped (an HTTP range request). */
  resumeDownload(id: number): Promise<DownloadView>;
  /** Stops it and deletes the partial file. */
  cancelDownload(id: number): Promise<DownloadView>;
  /** Forgets a finished, failed or cancelled download (the downloaded model stays in the library). */
  removeDownload(id: number): Promise<void>;
}

export const DOWNLOADS_METHODS = [
  'startDownload',
  'listDownloads',
  'pauseDownload',
  'resumeDownload',
  'cancelDownload',
  'removeDownload',
] as const satisfies readonly (keyof DownloadsApi)[];
