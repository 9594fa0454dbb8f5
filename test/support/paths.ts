import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The shared test data beside the checkout (../shared), as in CI. */
export const SHARED = fileURLToPath(new URL('../../../shared/', import.meta.url));
export const MODELS = join(SHARED, 'models');
export const STORIES_260K = join(MODELS, 'stories260K.gguf');
export const TINY_RANDOM_LLAMA = join(MODELS, 'llama-2-tiny-random.gguf');
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
