/** Why Electron cannot be launched, when electronBinaryPath() finds nothing. */
export declare const ELECTRON_MISSING: string;
/** The absolute path of the Electron executable, or undefined when it has not been downloaded. */
export declare function electronBinaryPath(): string | undefined;
