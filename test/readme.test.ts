import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { renderConfigTable } from '../src/config/index.js';
import { README_PATH, replaceConfigTable } from '../scripts/readme.js';

describe('README.md', () => {
  it('lists every config key as the schema defines it (run `npm run docs` to refresh)', () => {
    const readme = readFileSync(README_PATH, 'utf8');
    expect(readme).toBe(replaceConfigTable(readme, renderConfigTable()));
  });
});
