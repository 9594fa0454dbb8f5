/**
 * What a download URL stands for: an http(s) URL, or `hf://<org>/<repo>[@<revision>]/<path>` for a
 * file of a Hugging Face repository, fetched from HF_ENDPOINT (default https://huggingface.co)
 * the way huggingface_hub fetches it (`<endpoint>/<org>/<repo>/resolve/<revision>/<path>`).
 */

const DEFAULT_HF_ENDPOINT = 'https://huggingface.co';

export interface DownloadSource {
  /** The http(s) URL to fetch. */
  url: string;
  /** The file name to save it as (ends with .gguf). */
  fileName: string;
}

function huggingFaceEndpoint(env: NodeJS.ProcessEnv): string {
  return (env.HF_ENDPOINT?.trim() || DEFAULT_HF_ENDPOINT).replace(/\/+$/, '');
}

export function resolveDownloadUrl(input: string, env: NodeJS.ProcessEnv): DownloadSource {
  const text = input.trim();
  const endpoint = huggingFaceEndpoint(env);
  if (text.toLowerCase().startsWith('hf://')) return fromHuggingFace(text, endpoint);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${input}" is not a URL (give an http(s):// URL or hf://<org>/<repo>/<file.gguf>)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${input}: only http(s):// and hf:// URLs can be downloaded`);
  }
  // A file page copied from the browser (…/blob/<revision>/…) is downloaded from …/resolve/….
  const page = /^\/([^/]+)\/([^/]+)\/blob\/(.+)$/.exec(url.pathname);
  if (page && url.origin === new URL(endpoint).origin) url.pathname = `/${page[1]}/${page[2]}/resolve/${page[3]}`;
  return { url: url.href, fileName: fileNameOf(decodeURIComponent(url.pathname.split('/').at(-1) ?? ''), input) };
}

function fromHuggingFace(text: string, endpoint: string): DownloadSource {
  const [org, repoAt, ...file] = text.slice('hf://'.length).split('/');
  if (!org || !repoAt || file.length === 0 || file.some((s) => s === '' || s === '.' || s === '..')) {
    throw new Error(
      `${text}: an hf:// URL names a file in a repository: hf://<org>/<repo>/<file.gguf> (or <repo>@<revision>)`,
    );
  }
  const [repo, revision = 'main'] = repoAt.split('@') as [string, string?];
  const path = [org, repo, 'resolve', revision, ...file].map(encodeURIComponent).join('/');
  return { url: `${endpoint}/${path}`, fileName: fileNameOf(file.at(-1)!, text) };
}

/**
 * A safe file name for the models folder: no folders, no characters Windows refuses, no invisible
 * format characters (bidi controls and isolates, zero-width ones: they make a name read as
 * another), ends in .gguf.
 */
function fileNameOf(name: string, input: string): string {
  const safe = name
    .replace(/\p{Cf}/gu, '')
    .replace(/[<>:"/\\|?*\p{Cc}]/gu, '_')
    .replace(/^\.+/, '')
    .trim();
  if (safe === '') throw new Error(`${input}: the URL does not name a file`);
  return /\.gguf$/i.test(safe) ? safe : `${safe}.gguf`;
}
