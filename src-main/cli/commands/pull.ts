import type { DownloadView, GufoEvent } from '../../../src-preload/api';
import { CliError, log, printJson, type Command } from '../command';
import { formatBytes, formatDuration } from '../format';
import { withLibrary } from '../library-backend';
import { progressBar } from '../progress';

const HELP = `Usage: gufo pull <url | hf://<org>/<repo>/<file.gguf>> [--sha256 <hex>] [--json]

Downloads a GGUF file into Gufo's models folder, where it joins the library. hf:// names a file
of a Hugging Face repository (hf://org/repo@revision/file.gguf for another revision than main),
fetched from HF_ENDPOINT (default https://huggingface.co).

Every request is retried with back-off when its connection drops, and the download goes on where
it stopped; Ctrl-C pauses, and the same command later (or the app) resumes from the bytes already
there. Before a byte is written the free disk space is checked; at the end the SHA-256 is checked
against --sha256 or the one Hugging Face publishes, and the file must be a readable GGUF, else it
is deleted.

Options:
  --sha256 HEX   the SHA-256 the file must have
  --json         print { url, path, bytes, sha256, sha256Source, modelId } on stdout
`;

export const pullCommand: Command = {
  help: HELP,
  options: {
    sha256: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const [url, ...extra] = args.positionals;
    if (!url || extra.length > 0) throw new CliError('expected one URL (see gufo pull --help)');
    const sha256 = typeof args.values.sha256 === 'string' ? args.values.sha256 : undefined;
    const result = await withLibrary(async ({ api, events }) => {
      const bar = progressBar('pull');
      let id: number | null = null;
      let resolveEnd: (view: DownloadView) => void = () => {};
      const ended = new Promise<DownloadView>((resolve) => (resolveEnd = resolve));
      const stop = events.subscribe((event: GufoEvent) => {
        if (event.type !== 'download' || event.download.id !== id) return;
        const d = event.download;
        if (d.status === 'running' && d.total) bar.update(d.bytes / d.total, describe(d));
        if (d.status === 'done' || d.status === 'failed' || d.status === 'cancelled' || d.status === 'paused')
          resolveEnd(d);
      });
      const pause = () => {
        if (id !== null) void api.pauseDownload(id);
      };
      process.once('SIGINT', pause);
      process.once('SIGTERM', pause);
      try {
        const started = await api.startDownload({ url, sha256 });
        id = started.id;
        log(`${url} → ${started.path}${started.bytes > 0 ? ` (resuming at ${formatBytes(started.bytes)})` : ''}`);
        const current = (await api.listDownloads()).find((d) => d.id === id);
        if (current && ['done', 'failed', 'cancelled', 'paused'].includes(current.status)) resolveEnd(current);
        return await ended;
      } finally {
        bar.done();
        stop();
        process.off('SIGINT', pause);
        process.off('SIGTERM', pause);
      }
    });
    if (result.status === 'paused')
      throw new CliError(`paused at ${formatBytes(result.bytes)}; run the same command again to resume`);
    if (result.status !== 'done') throw new CliError(result.error ?? `the download was ${result.status}`);
    if (args.values.json) {
      return printJson({
        url: result.url,
        path: result.path,
        bytes: result.bytes,
        sha256: result.sha256,
        sha256Source: result.sha256Source,
        modelId: result.modelId,
      });
    }
    log(
      `${result.path}: ${formatBytes(result.bytes)}, SHA-256 ${result.sha256}${result.sha256Source ? ` (matches the ${result.sha256Source} one)` : ''}`,
    );
  },
};

function describe(d: DownloadView): string {
  const speed = d.bytesPerSecond === null ? '' : `, ${formatBytes(d.bytesPerSecond)}/s`;
  const eta = d.etaSeconds === null ? '' : `, ${formatDuration(d.etaSeconds)} left`;
  return `${formatBytes(d.bytes)} of ${formatBytes(d.total ?? 0)}${speed}${eta}`;
}
