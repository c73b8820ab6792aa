import { afterEach } from 'vitest';
import { join } from 'node:path';
import { defaultConfig, loadConfig, type Config } from '../../src/config/index.js';
import { DaCache, DaClient } from '../../src/da/index.js';
import { initHome, type Genesis } from '../../src/home/index.js';
import { silentLogger } from '../../src/log/index.js';
import { chainNamespaces, openExecution, type Closers, type CoreParts } from '../../src/node/index.js';
import { BlockStore } from '../../src/store/index.js';
import { Ed25519Key } from '../../src/types/index.js';
import { systemClock } from '../../src/util/index.js';
import { tempHome } from './daemon.js';

/**
 * The parts a node's components are built from, as Node.init opens them but
 * with no socket: a real classic-level store and DA cache in a temp dir, the
 * kv execution layer, and a DA client nothing calls (a test that needs DA
 * starts one). Everything opened is closed by `closers`, in reverse.
 */
export async function coreParts(closers: Closers, opts: { config?: (c: Config) => void; signer?: Ed25519Key; chainId?: string } = {}): Promise<CoreParts> {
  const dir = tempHome('noded-parts-');
  closers.push(() => dir.cleanup());
  const config = defaultConfig();
  opts.config?.(config);
  const signer = opts.signer ?? Ed25519Key.generate();
  const genesis: Genesis = {
    chainId: opts.chainId ?? 'parts-1',
    initialHeight: 1n,
    startTime: 1_700_000_000_000_000_000n,
    proposerAddress: signer.address,
    daStartHeight: 0n,
    daEpochForcedInclusion: 10n,
  };
  const logger = silentLogger();
  const store = await BlockStore.open(join(dir.dir, 'store'));
  closers.push(() => store.close());
  const { mempool, executor, execution } = await openExecution({ config, homeDir: dir.dir, genesis, store, logger, metrics: null }, closers);
  const da = new DaClient({ address: config.da.address, authToken: '', requestTimeoutMs: config.da.request_timeout });
  closers.push(() => da.close());
  return {
    config,
    genesis,
    genesisFile: join(dir.dir, 'config', 'genesis.json'),
    signer,
    store,
    mempool,
    executor,
    execution,
    da,
    cache: new DaCache(join(dir.dir, 'cache'), logger),
    namespaces: chainNamespaces(config, genesis),
    logger,
    metrics: null,
    clock: systemClock,
  };
}

/**
 * A new home for a node run in this process: every listener on 127.0.0.1 port 0
 * (the tests pass while a devnet holds the default ports) and the built-in DA;
 * `flags` add to these or override them.
 */
export function portZeroHome(
  chainId: string,
  flags: Record<string, string | boolean> = {},
  aggregator = true,
): { home: ReturnType<typeof tempHome>; config: Config } {
  const home = tempHome();
  initHome({ home: home.dir, chainId, aggregator, force: false });
  const config = loadConfig({
    home: home.dir,
    flags: {
      'rpc.address': '127.0.0.1:0',
      'rpc.status_address': '127.0.0.1:0',
      'p2p.listen_address': '/ip4/127.0.0.1/tcp/0',
      'node.block_time': '100ms',
      'da.local': true,
      'da.address': 'http://127.0.0.1:0',
      'da.block_time': '100ms',
      ...flags,
    },
  });
  return { home, config };
}

/** The closers of a test's parts, closed in reverse after each test (even a failed one). */
export function closedAfterEach(): Closers {
  const closers: Closers = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  return closers;
}
