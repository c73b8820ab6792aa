import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { BlockStore, Bucket, MetadataKey, STORE_FORMAT_VERSION, StoreFormatError, bucketKey, heightKey, stringKey } from '../../src/store/index.js';
import { Homes } from '../helpers/homes.js';
import { runCli, tempHome } from '../helpers/daemon.js';

const homes = new Homes();
const cleanups: Array<() => void> = [];
afterEach(() => {
  homes.cleanup();
  for (const c of cleanups.splice(0)) c();
});

/**
 * A store as noded wrote it before the ev-node wire format: a block and the
 * old State (last_block_time a uint64 at field 5, where ev-node's State has a
 * Timestamp), and no format version key.
 */
async function writeOldFormatStore(path: string): Promise<void> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' });
  await db.open();
  // State{chain_id: "old", initial_height: 1, last_block_height: 1, last_block_time: 5 (uint64)}
  const oldState = Uint8Array.from([0x12, 0x03, 0x6f, 0x6c, 0x64, 0x18, 0x01, 0x20, 0x01, 0x28, 0x05]);
  await db.batch([
    { type: 'put', key: heightKey(Bucket.block, 1n), value: Uint8Array.from([0x0a, 0x00, 0x12, 0x00]) },
    { type: 'put', key: bucketKey(Bucket.state), value: oldState },
  ]);
  await db.close();
}

async function readVersionKey(path: string): Promise<Uint8Array | undefined> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' });
  await db.open();
  try {
    return await db.get(stringKey(Bucket.metadata, MetadataKey.storeFormatVersion));
  } finally {
    await db.close();
  }
}

describe('store format version', () => {
  it('marks a new store with the current format and opens it again', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    const path = join(home.dir, 'store');
    await (await BlockStore.open(path)).close();
    expect(new TextDecoder().decode(await readVersionKey(path))).toBe(String(STORE_FORMAT_VERSION));
    await (await BlockStore.open(path)).close();
  });

  it('refuses a store written in the old format, leaves it untouched, and says how to fix it', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    const path = join(home.dir, 'store');
    await writeOldFormatStore(path);
    for (let attempt = 0; attempt < 2; attempt++) {
      // Twice: the refused store is closed again (no lock left behind).
      const err = await BlockStore.open(path).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreFormatError);
      expect((err as Error).message).toMatch(/written by an older noded .*run `noded reset soft`, then `noded start` again to resync/);
    }
    expect(await readVersionKey(path)).toBeUndefined();
  });

  it('refuses a store of another format version', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    const path = join(home.dir, 'store');
    await (await BlockStore.open(path)).close();
    const db = new ClassicLevel<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open();
    await db.put(stringKey(Bucket.metadata, MetadataKey.storeFormatVersion), new TextEncoder().encode('3'));
    await db.close();
    await expect(BlockStore.open(path)).rejects.toThrow(/written by block format 3; this noded reads block format 2 only/);
  });

  it('`noded start` on an old-format home exits 1 naming the fix, and starts clean after `noded reset soft`', async () => {
    const home = await homes.create('old-format', true);
    const storeDir = join(home, 'data', 'store');
    await writeOldFormatStore(storeDir);
    const refused = await runCli(['start', '--home', home]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain('noded reset soft');
    const reset = await runCli(['reset', 'soft', '--home', home, '--yes']);
    expect(reset.code, reset.stderr).toBe(0);
    const store = await BlockStore.open(storeDir);
    expect(store.height()).toBe(0n);
    await store.close();
  });
});
