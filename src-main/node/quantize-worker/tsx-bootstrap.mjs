// Starts the quantize worker from the TypeScript sources (the CLI from sources, tests), as
// bin/gufo.mjs starts the CLI; built CLIs and the app run the bundled quantize-worker.js instead.
import { register } from 'tsx/esm/api';

register();
await import('./entry.ts');
