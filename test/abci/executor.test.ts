import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { AbciClient, AbciExecutor, AbciServer, KvStoreApp, OutOfSyncError } from '../../src/exec/abci/index.js';
import { Mempool } from '../../src/exec/index.js';
import type { Genesis } from '../../src/home/index.js';
import { silentLogger } from '../../src/log/index.js';
import { Chain } from '../../src/node/index.js';
import { BlockStore } from '../../src/store/index.js';
import { Ed25519Key } from '../../src/types/index.js';
import { systemClock } from '../../src/util/index.js';
import { tempHome } from '../helpers/daemon.js';

// The Info handshake of AbciExecutor against the reference app, in one process.

const enc = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function tempDir(): string {
  const d = tempHome('noded-abci-exec-');
  closers.push(() => d.cleanup());
  return d.dir;
}

async function kvstore(): Promise<AbciServer> {
  const server = await AbciServer.listen('tcp://127.0.0.1:0', new KvStoreApp(tempDir()), silentLogger());
  closers.push(() => server.close());
  return server;
}

const signer = Ed25519Key.generate();
const genesis: Genesis = {
  chainId: 'abci-exec',
  initialHeight: 1n,
  startTime: 1_700_000_000_000_000_000n,
  proposerAddress: signer.address,
  daStartHeight: 0n,
  daEpochForcedInclusion: 50n,
};

function appClient(address: string): AbciClient {
  const client = new AbciClient({ address, logger: silentLogger() });
  closers.push(() => client.close());
  return client;
}

function executor(store: BlockStore, address: string): AbciExecutor {
  return new AbciExecutor({
    client: appClient(address),
    store,
    mempool: new Mempool({ maxTxs: 100, maxTxBytes: 1024, retryAfterSeconds: 1 }, store),
    genesis,
    maxBlockTxBytes: 1 << 20,
    logger: silentLogger(),
  });
}

/** The start-up handshake of `exec`: resolves once it is done, rejects with what it would stop the node with. */
function handshake(exec: AbciExecutor): Promise<void> {
  return new Promise((resolve, reject) => {
    const controller = new AbortController();
    closers.push(() => controller.abort());
    exec.start(controller.signal, reject);
    void exec.stopped().then(resolve);
  });
}

/** A store with `blocks` blocks made by a chain over the app at `address`. */
async function storeWithBlocks(address: string, blocks: number): Promise<{ store: BlockStore; chain: Chain }> {
  const store = await BlockStore.open(join(tempDir(), 'store'));
  closers.push(() => store.close());
  const exec = executor(store, address);
  const chain = await Chain.load(store, exec, genesis, silentLogger(), systemClock);
  chain.onBlock((block) => exec.blockCommitted(block.header!.header!.height));
  for (let h = 1; h <= blocks; h++) await chain.produce([enc(`k${h}=v${h}`)], genesis.startTime + BigInt(h) * 1_000_000_000n, signer);
  return { store, chain };
}

describe('AbciExecutor handshake', () => {
  it("replays every stored block into an app that has none, from InitChain, to the node's app hash", async () => {
    const { store, chain } = await storeWithBlocks((await kvstore()).address, 4);
    const fresh = await kvstore();
    await handshake(executor(store, fresh.address));
    const info = await appClient(fresh.address).info();
    expect(info.lastBlockHeight).toBe(4n);
    expect(hex(info.lastBlockAppHash)).toBe(hex(chain.currentState.appHash));
  });

  it('stops on an app at the same height with another history', async () => {
    const { store } = await storeWithBlocks((await kvstore()).address, 3);
    const other = await kvstore();
    await storeWithBlocks(other.address, 0);
    const client = appClient(other.address);
    for (let h = 1n; h <= 3n; h++) {
      await client.consensus.call('finalizeBlock', { height: h, txs: [enc(`other${h}=x`)] });
      await client.consensus.call('commit', {});
    }
    const err = await handshake(executor(store, other.address)).catch((e) => e);
    expect(err).toBeInstanceOf(OutOfSyncError);
    expect(err.message).toMatch(
      /^execution layer out of sync: node at 3, app at 3: the app's hash at height 3 is [0-9a-f]{64} but the node's is [0-9a-f]{64}\. Stop the node and the app/,
    );
  });

  it('stops on an app ahead of the node', async () => {
    const app = await kvstore();
    await storeWithBlocks(app.address, 3);
    const { store } = await storeWithBlocks((await kvstore()).address, 1);
    const err = await handshake(executor(store, app.address)).catch((e) => e);
    expect(err.message).toMatch(/^execution layer out of sync: node at 1, app at 3: the app has committed blocks the node does not have/);
  });
});
