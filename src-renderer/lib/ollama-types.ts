/** The file types "Send to Ollama" offers, from the Export screen's plan for the same importance matrix. */
import type { ExportTypeOption } from '../../src-preload/api';

export interface OllamaTypeChoice {
  fileType: string;
  /** Why it cannot be chosen now (an IQ type without an importance matrix); null when it can. */
  disabled: string | null;
}

/** Every type the model can take, and those that need an importance matrix none was chosen for. */
export function ollamaTypeChoices(options: readonly ExportTypeOption[]): OllamaTypeChoice[] {
  return options
    .filter((o) => o.unavailable === null || o.needsImatrix)
    .map((o) => ({
      fileType: o.fileType,
      disabled: o.unavailable === null ? null : 'needs an importance matrix: choose one in Export above',
    }));
}
