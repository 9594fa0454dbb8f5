/**
 * What the user chose on the Benchmarks and Export screens, kept for as long as the app is open:
 * a screen is built anew on each visit, and coming back must find the choices as they were left.
 */

/** The model a screen works on. */
export interface ModelChoice {
  modelId: number | null;
}

export class BenchChoices implements ModelChoice {
  modelId: number | null = $state(null);
  promptTokens = $state(512);
  genTokens = $state(128);
}

export class ExportChoices implements ModelChoice {
  modelId: number | null = $state(null);
}

export const benchChoices = new BenchChoices();
export const exportChoices = new ExportChoices();
