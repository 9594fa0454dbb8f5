/**
 * The "OpenAI-compatible server" settings: the saved settings with the listener's status, each
 * change saved at once (the back end restarts the listener), a refused value's reason kept beside
 * its field.
 */
import type { GufoBridge, OpenAiServerSettings, OpenAiServerStatus } from '../../src-preload/api';
import { messageOf } from './format';

export type OpenAiServerField = keyof OpenAiServerSettings;

export class OpenAiServerStore {
  status: OpenAiServerStatus | null = $state(null);
  loadError: string | null = $state(null);
  /** Why the last attempt to save a field failed. */
  errors: Partial<Record<OpenAiServerField, string>> = $state({});
  saving = $state(false);
  readonly #gufo: GufoBridge;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
  }

  /** Loads the status, and again when the library changes (the model ids); answers how to stop. */
  start(): () => void {
    void this.load();
    return this.#gufo.onEvent((event) => {
      if (event.type === 'library-changed') void this.load();
    });
  }

  async load(): Promise<void> {
    try {
      this.status = await this.#gufo.openAiServerStatus();
      this.loadError = null;
    } catch (err) {
      this.loadError = messageOf(err);
    }
  }

  /** Saves one field; on refusal keeps the back end's reason for the field and answers false. */
  async save<K extends OpenAiServerField>(field: K, value: OpenAiServerSettings[K]): Promise<boolean> {
    this.saving = true;
    try {
      this.status = await this.#gufo.updateOpenAiServerSettings({ [field]: value });
      delete this.errors[field];
      return true;
    } catch (err) {
      this.errors[field] = fieldMessage(messageOf(err));
      return false;
    } finally {
      this.saving = false;
    }
  }

  /** A new random key, saved at once. */
  generateKey(): Promise<boolean> {
    const bytes = crypto.getRandomValues(new Uint8Array(24));
    return this.save('apiKey', `gufo-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`);
  }
}

/** The back end names the setting ('setting "openAiServer.port" must be …'); beside its field, the name goes without saying. */
function fieldMessage(message: string): string {
  const reason = message.replace(/^setting "openAiServer\.\w+" /, '');
  return reason.charAt(0).toUpperCase() + reason.slice(1);
}
