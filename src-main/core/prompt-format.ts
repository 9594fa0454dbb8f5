/**
 * How a chat's conversation becomes the text a model continues: the file's own chat template,
 * plain completion (for base models, trained on plain text and never on turns), or one of the
 * built-in template families (chat-templates/builtin.ts).
 */
import {
  BUILTIN_TEMPLATE_LABELS,
  BUILTIN_TEMPLATES,
  isBuiltinTemplateName,
  type BuiltinTemplateName,
} from './chat-templates/builtin';

export type PromptFormat = 'model' | 'completion' | BuiltinTemplateName;

export const COMPLETION_LABEL = 'Plain completion';
const MODEL_LABEL = "The model's own template";

/** The formats a model may use, in the order to offer them: its own template only when it has one. */
export function promptFormats(hasChatTemplate: boolean): { value: PromptFormat; label: string }[] {
  const builtin = (Object.keys(BUILTIN_TEMPLATES) as BuiltinTemplateName[]).map((name) => ({
    value: name,
    label: `${BUILTIN_TEMPLATE_LABELS[name]} template`,
  }));
  return [
    ...(hasChatTemplate ? [{ value: 'model' as const, label: MODEL_LABEL }] : []),
    { value: 'completion', label: COMPLETION_LABEL },
    ...builtin,
  ];
}

/**
 * The format of a new chat. A model without a template is a base model: a template's turn markers
 * are text it never saw in training, so it answers mid-word and runs on until the length limit;
 * continuing the conversation as written is what it was trained to do.
 */
export function defaultPromptFormat(hasChatTemplate: boolean): PromptFormat {
  return hasChatTemplate ? 'model' : 'completion';
}

/** What is wrong with `value` as the format of a chat whose model has (or lacks) a template; null when nothing. */
export function promptFormatProblem(value: unknown, hasChatTemplate: boolean): string | null {
  if (value === 'model')
    return hasChatTemplate ? null : 'cannot be "model": the model file has no chat template (tokenizer.chat_template)';
  if (value === 'completion' || (typeof value === 'string' && isBuiltinTemplateName(value))) return null;
  return `must be one of ${promptFormats(hasChatTemplate)
    .map((f) => JSON.stringify(f.value))
    .join(', ')}`;
}

/** A turn as plain completion reads it. */
export interface CompletionTurn {
  readonly role: string;
  readonly content: string;
}

/**
 * The conversation as plain text: the messages as written, one after another. An answer continues
 * the text before it exactly (it is what the model wrote after it); any other message starts on
 * a new line unless whitespace already separates it.
 */
export function completionText(turns: readonly CompletionTurn[]): string {
  let text = '';
  for (const { role, content } of turns) {
    const joined = text === '' || role === 'assistant' || /\s$/.test(text) || /^\s/.test(content);
    text += (joined ? '' : '\n') + content;
  }
  return text;
}
