/**
 * The Settings screen's state: the saved settings, each change saved at once, and the back end's
 * refusal of a value kept beside its field until the field is saved successfully.
 */
import type { GufoBridge, Settings } from '../../src-preload/api';
import { messageOf } from './format';
import { applyTheme } from './theme.svelte';

export type SettingsField = keyof Settings;

export class SettingsStore {
  settings: Settings | null = $state(null);
  loadError: string | null = $state(null);
  /** Why the last attempt to save a field failed. */
  errors: Partial<Record<SettingsField, string>> = $state({});
  /** The folder setting the in-app file browser is choosing for (browser mode has no native dialog). */
  browsingFor: 'modelDirs' | 'exportDir' | null = $state(null);
  readonly #gufo: GufoBridge;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
  }

  /** Loads the settings and follows changes saved elsewhere (another window); answers how to stop. */
  start(): () => void {
    this.#gufo.getSettings().then(
      (settings) => (this.settings = settings),
      (err: unknown) => (this.loadError = messageOf(err)),
    );
    return this.#gufo.onEvent((event) => {
      if (event.type === 'settings-changed') this.settings = event.settings;
    });
  }

  /** Saves one field; on refusal keeps the back end's reason for the field and answers false. */
  async save<K extends SettingsField>(field: K, value: Settings[K]): Promise<boolean> {
    try {
      this.settings = await this.#gufo.updateSettings({ [field]: value });
      delete this.errors[field];
      return true;
    } catch (err) {
      this.errors[field] = fieldMessage(messageOf(err));
      return false;
    }
  }

  /** Shown at once; saved, and put back if the save fails. */
  async setTheme(theme: Settings['theme']): Promise<void> {
    applyTheme(theme);
    if (!(await this.save('theme', theme)) && this.settings) applyTheme(this.settings.theme);
  }

  addModelDirs(dirs: string[]): Promise<boolean> {
    return this.save('modelDirs', [...(this.settings?.modelDirs ?? []), ...dirs]);
  }

  removeModelDir(dir: string): Promise<boolean> {
    return this.save(
      'modelDirs',
      (this.settings?.modelDirs ?? []).filter((d) => d !== dir),
    );
  }

  /** Asks for a folder with the native dialog; where there is none, opens the in-app browser (which calls `chose`). */
  async browse(field: 'modelDirs' | 'exportDir'): Promise<void> {
    let paths: string[] | null;
    try {
      paths = await this.#gufo.pickPaths('folder');
    } catch (err) {
      this.errors[field] = messageOf(err);
      return;
    }
    if (paths === null) this.browsingFor = field;
    else if (paths.length > 0) await this.chose(field, paths[0]!);
  }

  /** The in-app browser's choice, for the field it was opened for. */
  pickedInBrowser([dir]: string[]): void {
    const field = this.browsingFor;
    if (field && dir) void this.chose(field, dir);
  }

  /** A folder was chosen for `field`. */
  chose(field: 'modelDirs' | 'exportDir', dir: string): Promise<boolean> {
    this.browsingFor = null;
    return field === 'modelDirs' ? this.addModelDirs([dir]) : this.save('exportDir', dir);
  }
}

/** The back end names the setting ('setting "defaultContext" must be …'); beside its field, the name goes without saying. */
function fieldMessage(message: string): string {
  const reason = message.replace(/^setting "\w+":? /, '');
  return reason.charAt(0).toUpperCase() + reason.slice(1);
}
