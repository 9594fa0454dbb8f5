/** The new-chat dialog's state: the models to pick from, the title, the settings; and creating the chat. */
import type { ChatView, GufoBridge, KvCacheTypes, ModelEntry } from '../../src-preload/api';
import { messageOf } from './format';
import { newChatContext } from './new-chat-context';
import { generativeModels } from './library-view';
import { SettingsDraft } from './chat-settings.svelte';

export class NewChatForm {
  /** Only models Gufo can run (see ModelEntry.notRunnable). */
  models: ModelEntry[] = $state([]);
  modelId: number | null = $state(null);
  title = $state('');
  draft: SettingsDraft | null = $state(null);
  /** The context size a new chat gets when none is given (the app setting). */
  defaultContext: number | null = $state(null);
  /** The KV cache types "Default" stands for in the dialog. */
  kvCacheDefault: KvCacheTypes | null = $state(null);
  busy = $state(false);
  error: string | null = $state(null);

  readonly model = $derived(this.models.find((m) => m.id === this.modelId));

  readonly #gufo: GufoBridge;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
  }

  /** Loads what the dialog offers; `preferredModelId` (the last chat's) is picked if it can be. */
  async load(preferredModelId: number | null): Promise<void> {
    this.busy = true;
    this.error = null;
    this.title = '';
    try {
      const [models, presets, settings, kvCacheDefault] = await Promise.all([
        this.#gufo.listModels(),
        this.#gufo.samplingPresets(),
        this.#gufo.getSettings(),
        this.#gufo.kvCacheDefault(),
      ]);
      this.models = generativeModels(models);
      this.defaultContext = settings.defaultContext;
      this.kvCacheDefault = kvCacheDefault;
      this.draft = SettingsDraft.fresh(presets, null);
      this.pickModel(this.models.find((m) => m.id === preferredModelId)?.id ?? this.models[0]?.id ?? null);
    } catch (err) {
      this.error = messageOf(err);
    } finally {
      this.busy = false;
    }
  }

  /** Creates the chat; null when it could not be (the error is shown). */
  async create(): Promise<ChatView | null> {
    if (this.modelId === null || !this.draft) return null;
    this.busy = true;
    try {
      const title = this.title.trim();
      const view = await this.#gufo.createChat({
        modelId: this.modelId,
        ...(title && { title }),
        ...this.draft.asNewChat,
      });
      this.error = null;
      return view;
    } catch (err) {
      this.error = messageOf(err);
      return null;
    } finally {
      this.busy = false;
    }
  }

  /** Picks a model, and the context size for it: the app's default, or less if the model was trained on less. */
  pickModel(modelId: number | null): void {
    this.modelId = modelId;
    if (!this.draft) return;
    this.draft.contextSize = newChatContext(this.defaultContext, this.model?.contextLength ?? null);
  }
}
