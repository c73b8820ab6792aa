/**
 * A client generated from ev-node's execution.proto alone (test/fixtures/evnode-proto,
 * execution/grpc/proto/evnode/v1/execution.proto of evstack/ev-node fdc2b50f0,
 * package renamed to node.v1) calls every ExecutorService method of a running
 * `noded exec serve`, over gRPC (as ev-node's execution/grpc client does) and
 * Connect. Nothing of noded is used to call, encode tx batches or work out the
 * expected state roots, so a field served under another number, or a kv root
 * computed otherwise than README says, shows here.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { ExecutorService, FilterStatus, type TxBatch } from '../../fixtures/evnode-proto/gen/evnode/v1/execution_pb.js';
import { killAll, tempHome } from '../../helpers/daemon.js';
import { ExecServeProcess } from './helpers.js';

const execHomes: Array<ReturnType<typeof tempHome>> = [];
afterAll(async () => {
  await killAll();
  for (const h of execHomes.splice(0)) h.cleanup();
});

const enc = (s: string) => new TextEncoder().encode(s);
const sha256 = (b: Uint8Array) => new Uint8Array(createHash('sha256').update(b).digest());
const batch = (txs: string[]): TxBatch => ({ $typeName: 'node.v1.TxBatch', data: enc(txs.join('')), txSizes: txs.map((t) => enc(t).length) });

/**
 * The kv machine's state root, from its definition: sha256 of the sum mod 2^256
 * of sha256(len(key) as 4 bytes BE ‖ key ‖ value) over every entry.
 */
function kvRoot(state: Record<string, string>): Uint8Array {
  let sum = 0n;
  for (const [k, v] of Object.entries(state)) {
    const key = enc(k);
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, key.length);
    sum += BigInt(`0x${Buffer.from(sha256(Buffer.concat([len, key, enc(v)]))).toString('hex')}`);
  }
  return sha256(Buffer.from((sum % 2n ** 256n).toString(16).padStart(64, '0'), 'hex'));
}

async function codeOf(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await call.then(
    () => null,
    (e: unknown) => ConnectError.from(e),
  );
  expect(err, 'the call to fail').not.toBeNull();
  return { code: Code[err!.code], message: err!.rawMessage };
}

const transports: Record<string, (url: string) => Transport> = {
  grpc: (baseUrl) => createGrpcTransport({ baseUrl }),
  'connect-binary over HTTP/1.1': (baseUrl) => createConnectTransport({ baseUrl, httpVersion: '1.1' }),
};

describe("ev-node's generated ExecutorService client against `noded exec serve`", () => {
  for (const [protocol, transport] of Object.entries(transports)) {
    it(`every method over ${protocol}`, async () => {
      const home = tempHome('noded-exec-');
      execHomes.push(home);
      const exec = await ExecServeProcess.start(home.dir);
      const client = createClient(ExecutorService, transport(exec.url));
      const genesisTime = { $typeName: 'google.protobuf.Timestamp' as const, seconds: 1_700_000_000n, nanos: 0 };

      // InitChain: the empty state's root, the same again (idempotent); another chain is refused.
      const init = await client.initChain({ genesisTime, initialHeight: 1n, chainId: 'fixture' });
      expect(Buffer.from(init.stateRoot).toString('hex')).toBe(Buffer.from(kvRoot({})).toString('hex'));
      expect((await client.initChain({ genesisTime, initialHeight: 1n, chainId: 'fixture' })).stateRoot).toEqual(init.stateRoot);
      expect(await codeOf(client.initChain({ genesisTime, initialHeight: 1n, chainId: 'other' }))).toMatchObject({ code: 'FailedPrecondition' });
      expect(await codeOf(client.initChain({ initialHeight: 1n, chainId: 'fixture' }))).toEqual({
        code: 'InvalidArgument',
        message: 'genesis_time is required',
      });

      // GetTxs hands out what was sent to the executor's POST /tx.
      expect((await fetch(`${exec.url}/tx`, { method: 'POST', body: 'k=v' })).status).toBe(200);
      const got = await client.getTxs({});
      expect(got.txBatch?.txSizes).toEqual([3]);
      expect(new TextDecoder().decode(got.txBatch!.data)).toBe('k=v');
      expect((await client.getTxs({})).txBatch?.txSizes ?? []).toEqual([]);

      expect((await client.getExecutionInfo({})).maxGas).toBe(0n);

      // FilterTxs, as ev-node's kv testapp filters: empty and malformed (with force-included txs) removed, the rest past max_bytes postponed.
      const filtered = await client.filterTxs({
        txBatch: batch(['a=1', '', 'bad', 'b=22', 'c=333']),
        maxBytes: 8n,
        maxGas: 0n,
        hasForceIncludedTransaction: true,
      });
      expect(filtered.statuses).toEqual([
        FilterStatus.FILTER_OK,
        FilterStatus.FILTER_REMOVE,
        FilterStatus.FILTER_REMOVE,
        FilterStatus.FILTER_OK,
        FilterStatus.FILTER_POSTPONE,
      ]);

      // ExecuteTxs: the root of the state after; the same block again gives it again; a gap or another state is refused.
      const timestamp = { ...genesisTime, seconds: genesisTime.seconds + 1n };
      const block1 = { txBatch: batch(['k=v', 'a=1', 'not-kv', 'a=2']), blockHeight: 1n, timestamp, prevStateRoot: init.stateRoot };
      const root1 = (await client.executeTxs(block1)).updatedStateRoot;
      expect(Buffer.from(root1).toString('hex')).toBe(Buffer.from(kvRoot({ k: 'v', a: '2' })).toString('hex'));
      expect((await client.executeTxs(block1)).updatedStateRoot).toEqual(root1);
      expect(await codeOf(client.executeTxs({ ...block1, blockHeight: 3n, prevStateRoot: root1 }))).toEqual({
        code: 'OutOfRange',
        message: 'this executor is at height 1; block 3 needs block 2 first',
      });
      expect(await codeOf(client.executeTxs({ ...block1, blockHeight: 2n }))).toMatchObject({ code: 'FailedPrecondition' });
      expect(await codeOf(client.executeTxs({ ...block1, blockHeight: 2n, prevStateRoot: root1, timestamp: undefined }))).toEqual({
        code: 'InvalidArgument',
        message: 'timestamp is required',
      });
      const torn = { $typeName: 'node.v1.TxBatch' as const, data: enc('ab'), txSizes: [3] };
      expect(await codeOf(client.executeTxs({ ...block1, blockHeight: 2n, prevStateRoot: root1, txBatch: torn }))).toEqual({
        code: 'InvalidArgument',
        message: 'invalid tx_batch: tx sizes exceed data length at index 0',
      });
      const root2 = (await client.executeTxs({ txBatch: batch(['k=w']), blockHeight: 2n, timestamp, prevStateRoot: root1 })).updatedStateRoot;
      expect(Buffer.from(root2).toString('hex')).toBe(Buffer.from(kvRoot({ k: 'w', a: '2' })).toString('hex'));

      // SetFinal: an executed block, not one to come.
      await client.setFinal({ blockHeight: 2n });
      expect(await codeOf(client.setFinal({ blockHeight: 5n }))).toMatchObject({ code: 'OutOfRange' });
      expect(await codeOf(client.setFinal({ blockHeight: 0n }))).toEqual({ code: 'InvalidArgument', message: 'block_height must be > 0' });
    });
  }
});
