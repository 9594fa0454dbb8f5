/**
 * Instantiates a WebAssembly module shipped as base64 in a generated file (scripts/build-wasm.mjs):
 * synchronously, so callers stay synchronous, with nothing imported. Platform-free: Node, worker
 * threads and browsers all have WebAssembly and atob.
 */
export function instantiateBase64(base64: string): WebAssembly.Instance {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
}
