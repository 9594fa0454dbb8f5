import { resolve } from 'node:path';

/**
 * The package's root folder (package.json, out/, node_modules/): two folders up from this module
 * both in the sources (src-main/cli/) and in the built CLI, whose files all sit in out/cli/.
 */
export const PACKAGE_ROOT = resolve(import.meta.dirname, '../..');
