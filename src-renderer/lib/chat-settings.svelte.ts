/** A chat's settings while the user edits them: in the new-chat dialog and in a chat's settings. */
import type {
  ChatKvCacheTypes,
  ChatSettingsPatch,
  ContextOverflow,
  PromptFormat,
  SamplingPresetName,
  SamplingSettings,
} from '../../src-preload/api';
import { matchingPreset, samplingChanges, type SamplingPresets } from './chat-presets';

export class SettingsDraft {
  systemPrompt: string;
  sampling: SamplingSettings;
  /** Null: the back end's default. */
  contextSize: number | null;
  /** Null: the back end's default (the model's own template, or plain completion for a model without one). */
  promptFormat: PromptFormat | null;
  /** Null: the back end's default (DEFAULT_CONTEXT_OVERFLOW). */
  contextOverflow: ContextOverflow | null;
  /** K and V each: null for the server's default (ChatView.kvCacheDefault). */
  kvCacheTypes: ChatKvCacheTypes;
  /** Reasoning models' enable_thinking; null: the template's default. */
  thinking: boolean | null;
  /** The preset picked last, which edited values start from; null for values that never matched one. */
  base: SamplingPresetName | null = $state(null);

  constructor(
    readonly presets: SamplingPresets,
    initial: {
      systemPrompt: string;
      sampling: SamplingSettings;
      contextSize: number | null;
      promptFormat?: PromptFormat | null;
      contextOverflow?: ContextOverflow | null;
      kvCacheTypes?: ChatKvCacheTypes;
      thinking?: boolean | null;
    },
  ) {
    this.systemPrompt = $state(initial.systemPrompt);
    this.sampling = $state({ ...initial.sampling });
    this.contextSize = $state(initial.contextSize);
    this.promptFormat = $state(initial.promptFormat ?? null);
    this.contextOverflow = $state(initial.contextOverflow ?? null);
    this.kvCacheTypes = $state({ ...(initial.kvCacheTypes ?? { k: null, v: null }) });
    this.thinking = $state(initial.thinking ?? null);
    this.base = matchingPreset(presets, initial.sampling);
  }

  /** A draft for a new chat, starting from the balanced preset. */
  static fresh(presets: SamplingPresets, contextSize: number | null): SettingsDraft {
    return new SettingsDraft(presets, { systemPrompt: '', sampling: presets.balanced, contextSize });
  }

  /** Whether the values differ from the preset picked. */
  get edited(): boolean {
    return this.base === null || samplingChanges(this.presets[this.base], this.sampling) !== null;
  }

  applyPreset(name: SamplingPresetName): void {
    this.base = name;
    this.sampling = { ...this.presets[name] };
  }

  /** For createChat: the preset picked and the values changed from it. */
  get asNewChat(): {
    systemPrompt: string;
    preset: SamplingPresetName;
    sampling?: Partial<SamplingSettings>;
    contextSize?: number;
    contextOverflow?: ContextOverflow;
    kvCacheTypes?: ChatKvCacheTypes;
    thinking?: boolean;
  } {
    const preset = this.base ?? 'balanced';
    const changes = samplingChanges(this.presets[preset], this.sampling);
    return {
      systemPrompt: this.systemPrompt,
      preset,
      ...(changes && { sampling: changes }),
      ...(this.contextSize !== null && { contextSize: this.contextSize }),
      ...(this.contextOverflow !== null && { contextOverflow: this.contextOverflow }),
      ...((this.kvCacheTypes.k !== null || this.kvCacheTypes.v !== null) && { kvCacheTypes: { ...this.kvCacheTypes } }),
      ...(this.thinking !== null && { thinking: this.thinking }),
    };
  }

  /** For updateChatSettings. */
  get asSettings(): ChatSettingsPatch {
    return {
      systemPrompt: this.systemPrompt,
      sampling: { ...this.sampling },
      ...(this.contextSize !== null && { contextSize: this.contextSize }),
      ...(this.promptFormat !== null && { promptFormat: this.promptFormat }),
      ...(this.contextOverflow !== null && { contextOverflow: this.contextOverflow }),
      kvCacheTypes: { ...this.kvCacheTypes },
      thinking: this.thinking,
    };
  }
}
