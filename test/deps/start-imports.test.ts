import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Libraries only some nodes use: an HA node's etcd client (etcd3, gRPC,
 * protobufjs), an ABCI app's codecs, an EVM or supervised child's HTTP client,
 * a metrics server. `noded start` imports them when its config asks for them;
 * one static import puts them in every node's memory (bench figure rss: the HA
 * wiring's alone was ~11 MB of an idle devnet).
 */
const ONLY_SOME_NODES = ['etcd3', '@grpc/grpc-js', 'protobufjs', 'cosmjs-types', 'undici', 'prom-client'];

/** What `noded start` loads before it reads its config: its command and the node's modules (dist/, built by the global setup). */
const LOADED_AT_START = ['dist/commands/start.js', 'dist/src/node/index.js'];

// A spawned node lists the packages behind its CommonJS module cache, which ESM imports of CommonJS fill too.
const listPackages = (entries: string[]) => `
for (const entry of ${JSON.stringify(entries)}) await import(new URL(entry, ${JSON.stringify(`file://${root}`)}).href);
const { createRequire } = await import('node:module');
const packages = Object.keys(createRequire(${JSON.stringify(root)}).cache).map((path) => {
  const [scope, name] = path.split('node_modules/').pop().split('/');
  return scope.startsWith('@') ? scope + '/' + name : scope;
});
process.stdout.write(JSON.stringify([...new Set(packages)]));
`;

/** The packages loading `entries` puts in a fresh node process. */
async function packagesLoadedBy(entries: string[]): Promise<string[]> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', listPackages(entries)], { cwd: root, timeout: 30_000 });
  const packages = JSON.parse(stdout) as string[];
  expect(packages, `stderr: ${stderr}`).toContain('@oclif/core');
  return packages;
}

describe('what noded start loads before it reads its config', () => {
  it('holds none of the libraries only some nodes use', async () => {
    expect((await packagesLoadedBy(LOADED_AT_START)).filter((p) => ONLY_SOME_NODES.includes(p))).toEqual([]);
  });

  it("noded doctor loads etcd's client only when it checks an HA node, and neither the store nor the logger (bench figure doctor)", async () => {
    // etcd's client was ~250 ms of doctor's start-up; src/da's and src/exec/evm's indexes (the built-in DA server,
    // the submitter, the store, pino) ~90 modules more, where the checks need only the DA client and the JWT reader.
    const notForDoctor = ['etcd3', '@grpc/grpc-js', 'protobufjs', 'classic-level', 'pino', 'pino-pretty'];
    expect((await packagesLoadedBy(['dist/commands/doctor.js'])).filter((p) => notForDoctor.includes(p))).toEqual([]);
  });
});
