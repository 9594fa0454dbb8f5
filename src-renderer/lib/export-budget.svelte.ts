/**
 * The Export screen's GPU memory budget for the chosen model, asked of the back end: the setting
 * (the adapter only when it is automatic: asking opens the GPU), and the KV cache a new chat on the
 * model would allocate. Asked again when the settings change.
 */
import type { GufoBridge, Settings } from '../../src-preload/api';
import { budgetFit, memoryBudget, type BudgetFit } from './export-budget';
import { newChatContext } from './new-chat-context';
import { messageOf } from './format';

export class BudgetStore {
  /** Null when there is no budget (a real GPU and no setting), or before it is known. */
  fit: BudgetFit | null = $state(null);
  error: string | null = $state(null);
  readonly #gufo: GufoBridge;
  /** Counts loads, so a slower earlier one (another model, older settings) is dropped. */
  #load = 0;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
  }

  /** Loads the budget for the model and follows settings saved meanwhile; answers how to stop. */
  start(modelId: number): () => void {
    void this.#loadFor(modelId);
    return this.#gufo.onEvent((event) => {
      if (event.type === 'settings-changed') void this.#loadFor(modelId, event.settings);
    });
  }

  async #loadFor(modelId: number, known?: Settings): Promise<void> {
    const load = ++this.#load;
    try {
      const settings = known ?? (await this.#gufo.getSettings());
      const adapter = settings.gpuMemoryBudgetGiB === null ? await this.#gufo.gpuAdapter() : null;
      const budget = memoryBudget(settings.gpuMemoryBudgetGiB, adapter);
      let fit: BudgetFit | null = null;
      if (budget) {
        const model = await this.#gufo.getModel(modelId);
        const context = newChatContext(settings.defaultContext, model.contextLength);
        const { kvBytes } = await this.#gufo.memoryEstimate(modelId, context);
        fit = budgetFit(budget, kvBytes === null ? null : { bytes: kvBytes, context });
      }
      if (load !== this.#load) return;
      this.fit = fit;
      this.error = null;
    } catch (err) {
      if (load === this.#load) this.error = `Could not work out the GPU memory budget: ${messageOf(err)}`;
    }
  }
}
