// Starts the prompt worker from the TypeScript sources (the CLI, `gufo serve`, tests), as
// bin/gufo.mjs starts the CLI; the app runs the built prompt-worker.js instead.
import { register } from 'tsx/esm/api';

register();
await import('./entry.ts');
