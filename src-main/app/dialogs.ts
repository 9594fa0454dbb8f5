/** Native dialogs of the desktop app: the open dialog behind GufoApi.pickPaths, and About. */
import { dialog, type BrowserWindow, type MessageBoxOptions, type OpenDialogOptions } from 'electron';

export async function pickPaths(parent: BrowserWindow | undefined, kind: 'files' | 'folder'): Promise<string[]> {
  const options: OpenDialogOptions =
    kind === 'folder'
      ? { title: 'Add a folder of models', properties: ['openDirectory'] }
      : {
          title: 'Add models',
          properties: ['openFile', 'multiSelections'],
          filters: [{ name: 'GGUF models', extensions: ['gguf'] }],
        };
  const result = parent ? await dialog.showOpenDialog(parent, options) : await dialog.showOpenDialog(options);
  return result.canceled ? [] : result.filePaths;
}

/** A message box over `parent` when there is one. */
export async function showMessage(parent: BrowserWindow | undefined, options: MessageBoxOptions): Promise<void> {
  if (parent) await dialog.showMessageBox(parent, options);
  else await dialog.showMessageBox(options);
}

export function showAbout(
  parent: BrowserWindow | undefined,
  about: { version: string; dataDir: string },
): Promise<void> {
  return showMessage(parent, {
    type: 'info',
    title: 'About Gufo',
    message: `Gufo ${about.version}`,
    detail: [
      'Local LLMs in GGUF files, offline.',
      '',
      `Electron ${process.versions.electron}`,
      `Chromium ${process.versions.chrome}`,
      `Node.js ${process.versions.node}`,
      `Data folder: ${about.dataDir}`,
    ].join('\n'),
  });
}
