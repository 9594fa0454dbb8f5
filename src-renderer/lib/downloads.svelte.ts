/**
 * The Downloads panel's state: every download, kept live from 'download' events, and the form
 * that starts one.
 */
import type { DownloadView, GufoBridge } from '../../src-preload/api';
import type { DownloadAction } from './downloads-view';
import { withDownload, withListing } from './downloads-view';
import { messageOf } from './format';

export class DownloadsStore {
  downloads: DownloadView[] = $state([]);
  url = $state('');
  sha256 = $state('');
  /** Why the last start or action failed (cleared by the next). */
  error: string | null = $state(null);
  starting = $state(false);

  readonly #gufo: GufoBridge;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
  }

  /** Loads the list and follows it; answers the function that stops following. */
  connect(): () => void {
    const stop = this.#gufo.onEvent((event) => {
      if (event.type === 'download') this.downloads = withDownload(this.downloads, event.download);
    });
    void this.#attempt(async () => {
      this.downloads = withListing(this.downloads, await this.#gufo.listDownloads());
    });
    return stop;
  }

  async start(): Promise<void> {
    this.starting = true;
    const ok = await this.#attempt(async () => {
      const started = await this.#gufo.startDownload({
        url: this.url,
        ...(this.sha256.trim() ? { sha256: this.sha256 } : {}),
      });
      this.downloads = withDownload(this.downloads, started);
    });
    this.starting = false;
    if (ok) {
      this.url = '';
      this.sha256 = '';
    }
  }

  async act(download: DownloadView, action: DownloadAction): Promise<void> {
    await this.#attempt(async () => {
      if (action === 'remove') {
        await this.#gufo.removeDownload(download.id);
        this.downloads = this.downloads.filter((d) => d.id !== download.id);
        return;
      }
      const method = {
        pause: (id: number) => this.#gufo.pauseDownload(id),
        resume: (id: number) => this.#gufo.resumeDownload(id),
        cancel: (id: number) => this.#gufo.cancelDownload(id),
      }[action];
      this.downloads = withDownload(this.downloads, await method.call(this.#gufo, download.id));
    });
  }

  async #attempt(work: () => Promise<void>): Promise<boolean> {
    this.error = null;
    try {
      await work();
      return true;
    } catch (err) {
      this.error = messageOf(err);
      return false;
    }
  }
}
