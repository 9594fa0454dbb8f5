/**
 * A new chat asked for on another screen (a model's Chat action in the Library or the Inspector):
 * the Chat screen opens its New chat dialog on that model.
 */
import { router } from './router.svelte';

class ChatStart {
  /** The model the next New chat dialog starts on; null once the Chat screen took it. */
  modelId: number | null = $state(null);

  with(modelId: number): void {
    this.modelId = modelId;
    router.go('chat');
  }

  take(): number | null {
    const id = this.modelId;
    this.modelId = null;
    return id;
  }
}

export const chatStart = new ChatStart();
