/** The module names built by `npm run build:wasm`: assembly/<name>.ts → src-main/core/wasm/<name>.wasm.ts. */
export declare const MODULES: readonly string[];
/** The generated file of module `name`, relative to the repository root. */
export declare function generatedPath(name: string): string;
/** Compiles assembly/<name>.ts and returns the text its generated file must hold. */
export declare function generatedSource(name: string): Promise<string>;
