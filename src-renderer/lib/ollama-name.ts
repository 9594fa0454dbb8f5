/** A model name Ollama accepts, suggested from the library's name and the chosen file type. */

/** "Qwen2.5 0.5B Instruct" + "Q4_K_M" → "qwen2.5-0.5b-instruct:q4_k_m". */
export function suggestOllamaName(modelName: string, fileType: string | null): string {
  const base =
    modelName
      .toLowerCase()
      .replace(/\.gguf$/, '')
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+|-+$/g, '')
      .replace(/-{2,}/g, '-') || 'model';
  return fileType ? `${base}:${fileType.toLowerCase()}` : base;
}
