/**
 * The file-system paths of what was dropped on the window. Browsers hide them, except in the
 * `text/uri-list` that desktop file managers put on the drag (file:// URIs); Electron reveals
 * them through its preload (`pathForFile`).
 */

/** Paths from a `text/uri-list` (RFC 2483: one URI a line, '#' lines are comments); non-file URIs are left out. */
export function pathsFromUriList(list: string): string[] {
  return list
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((uri) => {
      const path = fileUriToPath(uri);
      return path === null ? [] : [path];
    });
}

export function fileUriToPath(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  if (url.protocol !== 'file:') return null;
  const path = decodeURIComponent(url.pathname);
  // file:///C:/models/x.gguf is a Windows drive path; file://server/share/x.gguf a UNC path.
  if (/^\/[A-Za-z]:\//.test(path)) return path.slice(1).replaceAll('/', '\\');
  if (url.host !== '' && url.host !== 'localhost') return `\\\\${url.host}${path.replaceAll('/', '\\')}`;
  return path;
}

/** What was dropped, as paths; [] when the browser did not reveal where the files are. */
export function droppedPaths(
  data: Pick<DataTransfer, 'getData' | 'files'>,
  pathForFile?: (file: File) => string,
): string[] {
  const fromUris = pathsFromUriList(data.getData('text/uri-list'));
  if (fromUris.length > 0) return fromUris;
  if (!pathForFile) return [];
  return Array.from(data.files, (file) => pathForFile(file)).filter((path) => path !== '');
}
