/** How a download reads in the Downloads panel: plain functions, kept out of markup. */
import type { DownloadStatus, DownloadView } from '../../src-preload/api';
import { formatBytes, formatDuration, formatSpeed } from './format';

export const STATUS_LABELS: Record<DownloadStatus, string> = {
  queued: 'Waiting',
  running: 'Downloading',
  paused: 'Paused',
  verifying: 'Checking',
  done: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

export type DownloadAction = 'pause' | 'resume' | 'cancel' | 'remove';

/** What can be done with a download in its state, in the order the buttons show. */
export function actionsFor(status: DownloadStatus): DownloadAction[] {
  switch (status) {
    case 'queued':
    case 'running':
      return ['pause', 'cancel'];
    case 'paused':
      return ['resume', 'cancel'];
    case 'failed':
      return ['resume', 'remove'];
    case 'verifying':
      return [];
    case 'done':
    case 'cancelled':
      return ['remove'];
  }
}

/** 0..1, or null while the size is unknown (an indeterminate bar). */
export function fractionOf(d: Pick<DownloadView, 'bytes' | 'total'>): number | null {
  return d.total ? Math.min(1, d.bytes / d.total) : null;
}

/** "120 MB of 1.2 GB · 12.3 MB/s · 1 min left". */
export function describeProgress(d: Pick<DownloadView, 'bytes' | 'total' | 'bytesPerSecond' | 'etaSeconds'>): string {
  const parts = [d.total === null ? formatBytes(d.bytes) : `${formatBytes(d.bytes)} of ${formatBytes(d.total)}`];
  if (d.bytesPerSecond !== null) parts.push(formatSpeed(d.bytesPerSecond));
  if (d.etaSeconds !== null) parts.push(`${formatDuration(d.etaSeconds)} left`);
  return parts.join(' · ');
}

/**
 * The list with `update` in place of the download of the same id (new ones first), unless the
 * list already holds a later view of it.
 */
export function withDownload(list: readonly DownloadView[], update: DownloadView): DownloadView[] {
  const index = list.findIndex((d) => d.id === update.id);
  if (index === -1) return [update, ...list];
  if (list[index]!.revision > update.revision) return [...list];
  return list.map((d, i) => (i === index ? update : d));
}

/** A fresh listing, keeping any later view of a download that an event brought meanwhile. */
export function withListing(list: readonly DownloadView[], listing: readonly DownloadView[]): DownloadView[] {
  return listing.map((listed) => {
    const known = list.find((d) => d.id === listed.id);
    return known && known.revision > listed.revision ? known : listed;
  });
}
