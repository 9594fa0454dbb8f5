/**
 * Instantiates a WebAssembly module shipped as base64 in a generated file (scripts/build-wasm.mjs):
 * synchronously, so callers stay synchronous, with nothing imported. The module is compiled once
 * per base64 text, so further instances (one per decodedValues buffer, say) cost no compile.
 * Platform-free: Node, worker threads and browsers all have WebAssembly and atob.
 */
const compiled = new Map<string, WebAssembly.Module>();

export function instantiateBase64(base64: string): WebAssembly.Instance {
  let module = compiled.get(base64);
  if (!module) {
    const text = atob(base64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    module = new WebAssembly.Module(bytes);
    compiled.set(base64, module);
  }
  return new WebAssembly.Instance(module, {});
}

/** Grows `memory` (in 64 KiB pages) until it holds `bytes`; growing detaches every view of it. */
export function growTo(memory: WebAssembly.Memory, bytes: number): void {
  if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / 65536));
}
