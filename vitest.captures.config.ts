import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** `npm run docs:captures`: regenerates README's dashboard captures from a real run (not part of `npm test`). */
export default defineConfig({ ...base, test: { ...base.test, include: ['test/dashboard/readme-captures.ts'] } });
