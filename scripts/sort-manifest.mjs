// oclif writes commands in the order it finds their files, which differs between a
// fresh clone and a working tree; sorted by id, the manifest is the same everywhere,
// so CI's freshness check compares content, not file-system order.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../oclif.manifest.json', import.meta.url);
const manifest = JSON.parse(readFileSync(path, 'utf8'));
manifest.commands = Object.fromEntries(Object.entries(manifest.commands).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
