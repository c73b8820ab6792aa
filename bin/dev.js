#!/usr/bin/env -S node --import tsx
// Runs the commands from TypeScript sources (no build), for development.
import '../src/util/polyfill.ts';
import { execute } from '@oclif/core';

await execute({ development: true, dir: import.meta.url });
