/** How the library table sorts, filters and describes models: plain functions, kept out of markup. */
import type { ModelEntry, ModelSource, TypeShareView } from '../../src-preload/api';
import { formatParams } from './format';

export type SortKey = 'name' | 'architecture' | 'parameters' | 'bytes' | 'fileType' | 'contextLength' | 'source';
export type SortDirection = 'ascending' | 'descending';

export interface SortOrder {
  key: SortKey;
  direction: SortDirection;
}

export const SOURCE_LABELS: Record<ModelSource, string> = {
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
  huggingface: 'Hugging Face',
  jan: 'Jan',
  gpt4all: 'GPT4All',
  folder: 'Folder',
  added: 'Added',
  exported: 'Exported',
  downloaded: 'Downloaded',
};

/** Clicking the sorted column flips it; another column sorts ascending (numbers largest first). */
export function nextSort(current: SortOrder, key: SortKey): SortOrder {
  if (current.key === key) return { key, direction: current.direction === 'ascending' ? 'descending' : 'ascending' };
  const numeric = key === 'parameters' || key === 'bytes' || key === 'contextLength';
  return { key, direction: numeric ? 'descending' : 'ascending' };
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** Sorted copy; unknown values (null) go last whatever the direction, ties by name. */
export function sortModels(models: readonly ModelEntry[], order: SortOrder): ModelEntry[] {
  const sign = order.direction === 'ascending' ? 1 : -1;
  const value = (m: ModelEntry): string | number | null =>
    order.key === 'source' ? SOURCE_LABELS[m.source] : m[order.key];
  return [...models].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    if (x === null || y === null) {
      if (x !== y) return x === null ? 1 : -1;
    } else {
      const byKey = typeof x === 'number' && typeof y === 'number' ? x - y : collator.compare(String(x), String(y));
      if (byKey !== 0) return sign * byKey;
    }
    return collator.compare(a.name, b.name) || a.id - b.id;
  });
}

/**
 * Models whose name, path, architecture, file type or name in another app (Ollama's "name:tag",
 * "org/repo/file.gguf") contains every word of `query`, of `architecture` when set.
 */
export function filterModels(models: readonly ModelEntry[], query: string, architecture: string): ModelEntry[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return models.filter((m) => {
    if (architecture !== '' && m.architecture !== architecture) return false;
    const text = [m.name, m.path, m.architecture ?? '', m.fileType ?? '', ...m.locations.map((l) => l.label ?? '')]
      .join('\n')
      .toLowerCase();
    return words.every((word) => text.includes(word));
  });
}

/** The architectures present, for the filter's choices. */
export function architecturesOf(models: readonly ModelEntry[]): string[] {
  return [...new Set(models.flatMap((m) => (m.architecture === null ? [] : [m.architecture])))].sort(collator.compare);
}

export interface MixSegment {
  type: string;
  /** Share of the tensor bytes, 0–100. */
  percent: number;
}

/** The type mix as shares of bytes, largest first (as the back end orders it). */
export function mixSegments(mix: readonly TypeShareView[]): MixSegment[] {
  const total = mix.reduce((sum, t) => sum + t.bytes, 0);
  return total === 0 ? [] : mix.map((t) => ({ type: t.type, percent: (100 * t.bytes) / total }));
}

/** "Q4_K 82%, Q6_K 12%, F32 6%": what the bar shows, as text. */
export function describeMix(segments: readonly MixSegment[]): string {
  return segments.map((s) => `${s.type} ${s.percent < 1 ? '<1' : Math.round(s.percent)}%`).join(', ');
}

/** "In Ollama as tiny:latest", "In 3 places: Ollama, LM Studio, Hugging Face". */
export function describeLocations(model: Pick<ModelEntry, 'locations'>): string {
  const [first] = model.locations;
  if (!first) return '';
  if (model.locations.length === 1)
    return first.label ? `${SOURCE_LABELS[first.source]}: ${first.label}` : SOURCE_LABELS[first.source];
  const sources = [...new Set(model.locations.map((l) => SOURCE_LABELS[l.source]))];
  return `In ${model.locations.length} places: ${sources.join(', ')}`;
}

/** Apps that keep their own models: Gufo reads their files, and leaves deleting them to the app. */
const APP_SOURCES: readonly ModelSource[] = ['ollama', 'lmstudio', 'huggingface', 'jan', 'gpt4all'];

/** Why the model's files cannot be deleted from here, or null when they can. */
export function deletionBlocker(model: Pick<ModelEntry, 'locations'>): string | null {
  const app = model.locations.find((l) => APP_SOURCES.includes(l.source));
  if (app)
    return `It is ${SOURCE_LABELS[app.source]}’s: delete it there${app.source === 'ollama' ? ' (ollama rm)' : ''}. Here it can only be removed from the library.`;
  if (model.locations.some((l) => !l.path.toLowerCase().endsWith('.gguf')))
    return 'Gufo deletes only .gguf files; this one can only be removed from the library.';
  return null;
}

/** general.name under a model's name, when it says something the name does not ("llama" under "stories260K"). */
export function secondaryName(model: Pick<ModelEntry, 'name' | 'generalName'>): string | null {
  const general = model.generalName?.trim();
  return general && general.toLowerCase() !== model.name.toLowerCase() ? general : null;
}

/** A model in a picker: its name, and general.name where that says more ("stories260K · llama"). */
export function pickerLabel(model: Pick<ModelEntry, 'name' | 'generalName'>): string {
  const general = secondaryName(model);
  return general ? `${model.name} · ${general}` : model.name;
}

/** A model in a chat's model picker: its picker label, parameters and file type ("stories260K · 292K · F32"). */
export function chatPickerLabel(model: Pick<ModelEntry, 'name' | 'generalName' | 'parameters' | 'fileType'>): string {
  const parameters = model.parameters === null ? '' : ` · ${formatParams(model.parameters)}`;
  return `${pickerLabel(model)}${parameters}${model.fileType ? ` · ${model.fileType}` : ''}`;
}

/** The models a screen that runs them (export, tensor error) may offer. */
export function runnableModels(models: readonly ModelEntry[]): ModelEntry[] {
  return models.filter((m) => m.notRunnable === null);
}

/** The models a screen that generates text (chat, benchmarks) may offer: runnable, and not embedding-only. */
export function generativeModels(models: readonly ModelEntry[]): ModelEntry[] {
  return runnableModels(models).filter((m) => m.noGeneration === null);
}

/**
 * The library's count: "3 models, 1.2 GB", files that cannot be read apart ("and 1 unreadable
 * file"): they are listed with their reason, but are no models. `visible`: the rows the filter shows.
 */
export function librarySummary(models: readonly ModelEntry[], visible: number, totalBytes: string): string {
  const count = models.filter((m) => m.error === null).length;
  const unreadable = models.length - count;
  const modelsText = `${count} ${count === 1 ? 'model' : 'models'}`;
  const broken = unreadable > 0 ? ` and ${unreadable} unreadable ${unreadable === 1 ? 'file' : 'files'}` : '';
  return visible === models.length
    ? `${modelsText}${broken}, ${totalBytes}`
    : `${visible} of ${models.length} shown (${modelsText}${broken})`;
}
