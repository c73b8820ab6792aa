#!/usr/bin/env node
import { readFileSync } from 'node:fs';

// `--version` answers without loading oclif: scripts and health probes call it often.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`noded/${version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else {
  // `noded start` keeps V8's heap small while it starts (src/node/startup-heap.ts says why).
  if (args[0] === 'start') (await import('../dist/src/node/startup-heap.js')).holdStartupHeap();
  // libp2p 3 needs Promise.withResolvers, which Node 20 lacks: polyfill it before anything loads.
  await import('../dist/src/util/polyfill.js');
  const { execute } = await import('@oclif/core');
  await execute({ dir: import.meta.url });
}
