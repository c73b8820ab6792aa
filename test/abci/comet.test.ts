import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Comet38Client, connectComet } from '@cosmjs/tendermint-rpc';
import { Daemon, freePort, killAll, latestHeight, tempHome, waitFor } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';
import { KvStoreProcess, abciFlags } from './helpers.js';

// CosmJS's Comet38Client against a node driving the reference ABCI app (`noded abci kvstore`): every method
// of the status listener answers with what the app said (CheckTx, FinalizeBlock, Info, Query).

const homes = new Homes();
const appHome = tempHome('noded-kvstore-');
let node: Daemon;
let client: Comet38Client;

beforeAll(async () => {
  const address = `tcp://127.0.0.1:${await freePort()}`;
  await KvStoreProcess.start(appHome.dir, address);
  const home = await homes.create('comet-abci', true);
  const genesisFile = join(home, 'config', 'genesis.json');
  writeFileSync(genesisFile, JSON.stringify({ ...JSON.parse(readFileSync(genesisFile, 'utf8')), app_state: { seeded: 'yes' } }));
  node = await Daemon.start(home, [...abciFlags(address), '--node.node.block_time', '100ms']);
  await waitFor(async () => (await latestHeight(node.rpc)) >= 2, 'height 2');
  client = (await connectComet(node.status)) as Comet38Client;
});

afterAll(async () => {
  client?.disconnect();
  await killAll();
  homes.cleanup();
  appHome.cleanup();
});

const enc = (s: string) => new TextEncoder().encode(s);
const sha256 = (s: string) => createHash('sha256').update(s).digest();

describe('CosmJS Comet38Client against an abci node', () => {
  it('every info method answers: status, block, blockchain, commit, genesis (with app_state), validators, abci_info', async () => {
    expect(client).toBeInstanceOf(Comet38Client);
    const status = await client.status();
    expect(status.nodeInfo.network).toBe('comet-abci');
    const block = await client.block(2);
    expect(block.block.header.height).toBe(2);
    expect((await client.blockchain(1, 2)).blockMetas.map((m) => m.header.height)).toEqual([2, 1]);
    expect((await client.commit(2)).commit.signatures).toHaveLength(1);
    const genesis = await client.genesis();
    expect(genesis.appState).toEqual({ seeded: 'yes' });
    expect((await client.validators({})).validators[0]!.pubkey).toEqual(genesis.validators[0]!.pubkey);
    expect((await client.abciInfo()).data).toBe('kvstore');
    expect(await client.health()).toBeNull();
    expect((await client.numUnconfirmedTxs()).total).toBeGreaterThanOrEqual(0);
  });

  it("broadcast_tx_commit gives the app's CheckTx and FinalizeBlock results; tx and block_results keep them", async () => {
    const ok = await client.broadcastTxCommit({ tx: enc('fruit=apple') });
    expect(ok.checkTx.code).toBe(0);
    expect(ok.txResult!.code).toBe(0);
    expect(ok.height).toBeGreaterThan(0);
    const found = await client.tx({ hash: sha256('fruit=apple'), prove: true });
    expect(found.height).toBe(ok.height);
    expect(found.result.code).toBe(0);
    const results = await client.blockResults(ok.height);
    expect(results.results[found.index]).toEqual(found.result);
    expect((await client.abciQuery({ path: '/store', data: enc('fruit') })).value).toEqual(enc('apple'));

    // CheckTx refusing it: an answer with the app's code, not an error, and no block.
    const bad = await client.broadcastTxCommit({ tx: enc('=no-key') });
    expect(bad.checkTx).toMatchObject({ code: 1, codespace: 'kvstore', log: 'tx must be key=value with a non-empty key' });
    expect(bad.height).toBe(0);

    const sync = await client.broadcastTxSync({ tx: enc('fruit=pear') });
    expect(sync.code).toBe(0);
    const async = await client.broadcastTxAsync({ tx: enc('fruit=plum') });
    expect(Buffer.from(async.hash)).toEqual(sha256('fruit=plum'));
    await waitFor(async () => (await client.tx({ hash: sha256('fruit=plum') })).height > 0, 'the async tx committed');
  });

  it('refuses a committed tx everywhere, naming its block; errors come back as JSON-RPC errors', async () => {
    const { height } = await client.broadcastTxCommit({ tx: enc('once=1') });
    const again = await fetch(`${node.rpc}/tx`, { method: 'POST', body: 'once=1' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: string }).error).toMatch(new RegExp(`^tx already committed in block ${height} \\(index \\d+\\)$`));
    const refused = await client.broadcastTxSync({ tx: enc('once=1') }).catch((e: Error) => e);
    expect(JSON.parse((refused as Error).message)).toEqual({
      code: -32603,
      message: 'Internal error',
      data: expect.stringContaining(`tx already exists in cache: committed in block ${height}`),
    });
    const missing = await client.blockResults(1_000_000).catch((e: Error) => e);
    expect((missing as Error).message).toMatch(/"code":-32603.*height 1000000 must be less than or equal to the current blockchain height/);
  });
});
