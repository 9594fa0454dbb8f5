#!/usr/bin/env node
// Runs the TypeScript CLI straight from source, so `npx gufo` works right after `npm install`
// with no build step and never runs a stale build.
import { register } from 'tsx/esm/api';

register();
await import('../src-main/cli/main.ts');
