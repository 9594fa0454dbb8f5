/**
 * Where other apps keep their models, per OS, honouring the variables they honour. Paths are
 * built with the target OS's path rules, so every OS's defaults can be checked on any machine.
 */
import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';

export type AppStore = 'ollama' | 'lmstudio' | 'huggingface' | 'jan' | 'gpt4all';

export interface StoreRoot {
  source: AppStore;
  path: string;
  /** How the store is laid out: Ollama's manifests and blobs, Hugging Face's cache, or plain folders of .gguf files. */
  layout: 'ollama' | 'huggingface' | 'folder';
}

export interface StoreEnvironment {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

/** The user's home as the apps see it (HOME, or USERPROFILE on Windows). */
export function homeOf({ env, platform }: StoreEnvironment): string {
  return (platform === 'win32' ? env.USERPROFILE : env.HOME) || homedir();
}

/** The default model stores of Ollama, LM Studio, the Hugging Face cache, Jan and GPT4All, in that order. */
export function appStoreRoots(environment: StoreEnvironment): StoreRoot[] {
  const { env, platform } = environment;
  const path = platform === 'win32' ? win32 : posix;
  const home = homeOf(environment);
  const inHome = (...parts: string[]) => path.join(home, ...parts);
  // Per-user application data: %APPDATA% on Windows, ~/Library/Application Support on macOS, XDG elsewhere.
  const appData =
    platform === 'win32'
      ? env.APPDATA || inHome('AppData', 'Roaming')
      : platform === 'darwin'
        ? inHome('Library', 'Application Support')
        : env.XDG_DATA_HOME || inHome('.local', 'share');
  const localAppData = platform === 'win32' ? env.LOCALAPPDATA || inHome('AppData', 'Local') : appData;
  const cache = env.XDG_CACHE_HOME || inHome('.cache');

  const roots: StoreRoot[] = [];
  const add = (source: AppStore, layout: StoreRoot['layout'], ...paths: string[]) => {
    for (const p of paths) roots.push({ source, layout, path: path.resolve(p) });
  };

  // Ollama: OLLAMA_MODELS replaces the default; the Linux installer runs the service as the
  // `ollama` user, whose home is /usr/share/ollama.
  if (env.OLLAMA_MODELS) add('ollama', 'ollama', env.OLLAMA_MODELS);
  else
    add(
      'ollama',
      'ollama',
      inHome('.ollama', 'models'),
      ...(platform === 'linux' ? ['/usr/share/ollama/.ollama/models'] : []),
    );

  // LM Studio: ~/.lmstudio/models since 0.3, ~/.cache/lm-studio/models before, on every OS.
  add('lmstudio', 'folder', inHome('.lmstudio', 'models'), inHome('.cache', 'lm-studio', 'models'));

  // Hugging Face: HF_HUB_CACHE, else HF_HOME/hub, else <cache>/huggingface/hub (as huggingface_hub).
  const hfHome = env.HF_HOME || path.join(cache, 'huggingface');
  add('huggingface', 'huggingface', env.HF_HUB_CACHE || path.join(hfHome, 'hub'));

  // Jan: its data folder (llama.cpp models since 0.6, models/ before), and ~/jan of older versions.
  const jan = path.join(appData, 'Jan', 'data');
  add('jan', 'folder', path.join(jan, 'llamacpp', 'models'), path.join(jan, 'models'), inHome('jan', 'models'));

  // GPT4All: its application folder holds the downloaded .gguf files.
  add('gpt4all', 'folder', path.join(platform === 'win32' ? localAppData : appData, 'nomic.ai', 'GPT4All'));
  return roots;
}
