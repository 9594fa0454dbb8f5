/**
 * The name a model shows, from where it is (as LM Studio names models): what the app keeping the
 * file calls it (Ollama's "llama3.2:latest", the Hugging Face cache's "org/repo/file"), else its
 * file name; without ".gguf" and a split set's "-00001-of-0000N". general.name is shown beside it,
 * since it is often only the architecture ("llama") and shared by every quantization.
 */
export function modelName(location: { label: string | null; file_name: string }): string {
  return (location.label ?? location.file_name).replace(/(-\d{5}-of-\d{5})?\.gguf$/i, '');
}
