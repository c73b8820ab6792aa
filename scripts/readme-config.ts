// Rewrites README.md's config table from the config schema: `npm run docs`.
import { readFileSync, writeFileSync } from 'node:fs';
import { renderConfigTable } from '../src/config/index.js';
import { README_PATH, replaceConfigTable } from './readme.js';

writeFileSync(README_PATH, replaceConfigTable(readFileSync(README_PATH, 'utf8'), renderConfigTable()));
