/** What the app menu's own items do, over the back end and native dialogs. */
import { dialog, shell, type BrowserWindow } from 'electron';
import type { Backend } from '../backend/index';
import { pickPaths, showAbout, showMessage } from './dialogs';
import type { MenuActions } from './menu';

export function menuActions(backend: Backend, window: () => BrowserWindow | undefined): MenuActions {
  const { dataDir, version } = backend.context;

  /** Asks for files or a folder and adds them to the library; the window's library updates from the event. */
  async function addFromDialog(kind: 'files' | 'folder'): Promise<void> {
    const paths = await pickPaths(window(), kind);
    if (paths.length === 0) return;
    const { skipped } = await backend.api.addModels(paths);
    if (skipped.length === 0) return;
    await showMessage(window(), {
      type: 'warning',
      title: 'Add models',
      message: skipped.length === 1 ? 'One file was not added.' : `${skipped.length} files were not added.`,
      detail: skipped.map(({ path, reason }) => `${path}: ${reason}`).join('\n'),
    });
  }

  /** Menu clicks have no caller to report to: a failure is shown to the user. */
  const reported = (title: string, work: () => Promise<void>) => () =>
    void work().catch((err: unknown) => dialog.showErrorBox(title, err instanceof Error ? err.message : String(err)));

  return {
    addModels: reported('Could not add models', () => addFromDialog('files')),
    addFolder: reported('Could not add the folder', () => addFromDialog('folder')),
    openDataFolder: reported('Could not open the data folder', async () => {
      // openPath answers an error message instead of rejecting.
      const problem = await shell.openPath(dataDir);
      if (problem) throw new Error(`${dataDir}: ${problem}`);
    }),
    about: reported('About Gufo', () => showAbout(window(), { version, dataDir })),
  };
}
