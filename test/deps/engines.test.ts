import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import semver from 'semver';

const read = (path: string) => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));

// npm ci on Node 20 warned EBADENGINE for p-retry@8 (libp2p's, Node >= 22): a
// dependency that needs a newer Node than we promise breaks users on that Node.
describe('package.json engines', () => {
  it('promises no Node older than every installed dependency (dev tools included) supports', () => {
    const ours = read('package.json').engines.node as string;
    const oldest = semver.minVersion(ours)!.version;
    const lock = read('package-lock.json') as { packages: Record<string, { engines?: { node?: string }; optional?: boolean }> };
    const needNewer = Object.entries(lock.packages)
      // Optional packages for other platforms (rolldown's bindings) are never installed here.
      .filter(([path, p]) => path && !p.optional && typeof p.engines?.node === 'string' && !semver.satisfies(oldest, p.engines.node))
      .map(([path, p]) => `${path.replace(/^.*node_modules\//, '')} wants node ${p.engines!.node}`);
    expect(needNewer, `engines.node is ${ours}`).toEqual([]);
  });
});
