/**
 * The "Send to Ollama" form's state: the Ollama server (host and version, or why it cannot be
 * used), the name, type, context size and system prompt, and the job that sends the model.
 */
import type { GufoBridge, OllamaServerView } from '../../src-preload/api';
import { messageOf } from './format';
import { suggestOllamaName } from './ollama-name';
import { ollamaTypeChoices, type OllamaTypeChoice } from './ollama-types';

export class OllamaExportState {
  server: OllamaServerView | null = $state(null);
  /** File types this model can be re-quantized to (from the export plan), IQ types disabled without a matrix. */
  types: OllamaTypeChoice[] = $state([]);
  name = $state('');
  /** '' keeps the file as it is. */
  fileType = $state('');
  contextSize: number | null = $state(null);
  system = $state('');
  upload = $state(true);
  jobId: string | null = $state(null);
  error: string | null = $state(null);
  /** Whether the user typed a name (then it no longer follows the model and type). */
  #named = false;

  readonly #gufo: GufoBridge;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
  }

  async checkServer(): Promise<void> {
    try {
      this.server = await this.#gufo.ollamaServer();
    } catch (err) {
      this.error = messageOf(err);
    }
  }

  /** The types the model can take, as the Export screen's plan says with its importance matrix (`imatrix`). */
  async loadTypes(modelId: number, imatrix: string | undefined): Promise<void> {
    try {
      const plan = await this.#gufo.exportPlan(modelId, imatrix === undefined ? {} : { imatrix });
      this.types = ollamaTypeChoices(plan.options);
      if (this.fileType && !this.types.some((t) => t.fileType === this.fileType && t.disabled === null))
        this.fileType = '';
    } catch (err) {
      this.error = messageOf(err);
    }
  }

  /** The suggested name follows the model and type until the user types one. */
  suggest(modelName: string): void {
    if (!this.#named) this.name = suggestOllamaName(modelName, this.fileType || null);
  }

  rename(name: string): void {
    this.#named = true;
    this.name = name;
  }

  async send(modelId: number, imatrix: string | undefined): Promise<void> {
    this.error = null;
    try {
      this.jobId = await this.#gufo.startOllamaExport({
        modelId,
        name: this.name.trim(),
        ...(this.fileType ? { fileType: this.fileType, ...(imatrix === undefined ? {} : { imatrix }) } : {}),
        ...(this.contextSize ? { contextSize: this.contextSize } : {}),
        ...(this.system.trim() ? { system: this.system } : {}),
        upload: this.upload,
      });
    } catch (err) {
      this.error = messageOf(err);
    }
  }
}
