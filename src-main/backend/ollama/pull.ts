/**
 * `POST /api/pull`: a model downloaded into the library by the app's own downloader (as Library ›
 * Download a model does: resumable, checked, shown in the app's downloads), with its progress in
 * Ollama's status lines. Gufo pulls GGUF files by URL (hf://org/repo/file.gguf, http(s)); a bare
 * name of Ollama's registry ("llama3.2") is refused, naming what Gufo pulls.
 */
import { existsSync } from 'node:fs';
import type { DownloadView, GufoEvent } from '../../../src-preload/api';
import { resolveDownloadUrl } from '../../node/downloads/source-url';
import { invalidParam, OpenAiError } from '../openai/errors';
import type { OpenAiService } from '../openai/service';
import type { StatusLine } from './ndjson';

/** Statuses a download ends in (for now: paused ones are resumed by pulling again). */
const ENDED = new Set<DownloadView['status']>(['done', 'failed', 'cancelled', 'paused']);

/** Checks `name` is a URL Gufo downloads; answers it. */
export function pullSource(service: OpenAiService, name: string): string {
  if (!/^(hf|https?):\/\//i.test(name.trim()))
    throw invalidParam(
      'model',
      `"${name}" is a name in Ollama's registry, which Gufo does not pull from: give the URL of a GGUF file, hf://<org>/<repo>/<file.gguf> or http(s)://…/<file.gguf>`,
    );
  try {
    resolveDownloadUrl(name, service.ctx.env);
  } catch (err) {
    throw invalidParam('model', (err as Error).message);
  }
  return name.trim();
}

/** Downloads `url` into the library, reporting each step; resolves once the model is in the library. */
export async function pull(service: OpenAiService, url: string, report: (line: StatusLine) => void): Promise<void> {
  report({ status: 'pulling manifest' });
  // Pulled before and still in the library: nothing to fetch (a download again would be a second copy).
  const done = (await service.library.listDownloads()).find(
    (d) =>
      d.url === url && d.status === 'done' && existsSync(d.path) && service.ctx.models.byPath(d.path) !== undefined,
  );
  if (done) {
    report(progressLine(done));
    return;
  }
  // Subscribed before the download starts: its first events come before its id is known.
  const seen: DownloadView[] = [];
  let wake: () => void = () => {};
  const stop = service.ctx.events.subscribe((event: GufoEvent) => {
    if (event.type !== 'download') return;
    seen.push(event.download);
    wake();
  });
  try {
    const started = await service.library.startDownload({ url });
    let last = started;
    let verifying = false;
    while (!ENDED.has(last.status)) {
      const next = seen.shift();
      if (!next) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (next.id !== started.id || next.revision < last.revision) continue;
      last = next;
      if (last.status === 'running' && last.total !== null) report(progressLine(last));
      else if (last.status === 'verifying' && !verifying) {
        // Every byte is in: the last progress line says so, as Ollama's does.
        verifying = true;
        report(progressLine(last));
        report({ status: 'verifying sha256 digest' });
      }
    }
    if (last.status === 'failed') throw new OpenAiError(500, 'server_error', 'pull_failed', last.error ?? 'failed');
    if (last.status !== 'done')
      throw new OpenAiError(
        500,
        'server_error',
        'pull_stopped',
        `the download of ${url} was ${last.status} in Gufo; pull again to ${last.status === 'paused' ? 'resume it' : 'start over'}`,
      );
  } finally {
    stop();
  }
}

/** How far a download is, as Ollama's progress lines say it. */
function progressLine(download: DownloadView): StatusLine {
  return {
    status: `pulling ${download.fileName}`,
    digest: download.sha256 === null ? '' : `sha256:${download.sha256}`,
    total: download.total ?? download.bytes,
    completed: download.bytes,
  };
}
