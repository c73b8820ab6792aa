import { hash as digest } from 'node:crypto';
import type { ResponseCheckTx } from 'cosmjs-types/tendermint/abci/types';
import { CheckTxRejectedError, TxAlreadyKnownError, TxBackpressureError, TxRejectedError } from '../../exec/index.js';
import type { TxLocation } from '../../store/index.js';
import { txHash } from '../../types/index.js';
import type { ChainView, StatusMethod } from './chain-view.js';
import { perPage } from './chain-methods.js';
import { b64, hex, txResultJson } from './encoding.js';
import { internalError, serverError, type CallParams } from './jsonrpc.js';

/** How long broadcast_tx_commit waits for the block: CometBFT's timeout_broadcast_tx_commit default (config/config.go). */
export const BROADCAST_TX_COMMIT_TIMEOUT_MS = 10_000;

const sha256 = (b: Uint8Array) => digest('sha256', b, 'buffer');

/**
 * CometBFT's merkle proof of the tx at `index` among a block's txs (types/tx.go,
 * Txs.Proof; crypto/merkle/tree.go): an RFC 6962 tree over the txs' sha256,
 * split at the largest power of two below the count.
 */
export function txProof(txs: Uint8Array[], index: number) {
  const leaf = (h: Uint8Array) => sha256(Buffer.concat([Buffer.from([0]), h]));
  const inner = (l: Uint8Array, r: Uint8Array) => sha256(Buffer.concat([Buffer.from([1]), l, r]));
  const splitPoint = (n: number) => {
    let k = 1;
    while (k * 2 < n) k *= 2;
    return k;
  };
  const root = (items: Uint8Array[]): Uint8Array => {
    if (items.length === 1) return leaf(items[0]!);
    const k = splitPoint(items.length);
    return inner(root(items.slice(0, k)), root(items.slice(k)));
  };
  /** The root of `items` and the siblings' hashes from the leaf at `at` up (FlattenAunts' order). */
  const trail = (items: Uint8Array[], at: number): { root: Uint8Array; aunts: Uint8Array[] } => {
    if (items.length === 1) return { root: leaf(items[0]!), aunts: [] };
    const k = splitPoint(items.length);
    if (at < k) {
      const left = trail(items.slice(0, k), at);
      const right = root(items.slice(k));
      return { root: inner(left.root, right), aunts: [...left.aunts, right] };
    }
    const right = trail(items.slice(k), at - k);
    const left = root(items.slice(0, k));
    return { root: inner(left, right.root), aunts: [...right.aunts, left] };
  };
  const hashes = txs.map(sha256);
  const { root: rootHash, aunts } = trail(hashes, index);
  return {
    root_hash: hex(rootHash),
    data: b64(txs[index]!),
    // CometBFT leaves an empty aunts list out; CosmJS wants the array, so it is always written.
    proof: { total: String(txs.length), index: String(index), leaf_hash: b64(leaf(hashes[index]!)), aunts: aunts.map(b64) },
  };
}

/** ErrTxInCache's text (mempool/errors.go): what CometBFT answers for a tx it has seen, waiting or committed. */
const TX_IN_CACHE = 'tx already exists in cache';

/**
 * A refusal before or by the mempool, as CometBFT's broadcast methods return
 * it: a JSON-RPC internal error carrying the mempool's words. A node that
 * cannot take txs for now (paused at the pending cap, mempool full) answers a
 * server error (-32000, types.go RPCServerError) with the reason, as /tx
 * answers 503: CometBFT's own ErrMempoolIsFull comes back as -32603, but a
 * client retrying on "try later" must tell it from a refusal of the tx.
 */
function refusal(err: unknown, prefix = ''): never {
  if (err instanceof TxBackpressureError) throw serverError(`${prefix}${err.message}`);
  if (err instanceof TxAlreadyKnownError) throw internalError(`${prefix}${TX_IN_CACHE}: ${err.where}`);
  if (err instanceof TxRejectedError) throw internalError(`${prefix}${err.message}`);
  throw err;
}

/** CometBFT's tx and mempool methods (rpc/core/tx.go, mempool.go), over the node's tx index and mempool. */
export function txMethods(view: ChainView): Record<string, StatusMethod> {
  const b = view.backend;

  const txParam = (params: CallParams): Uint8Array => {
    const tx = params.bytes('tx', 'base64');
    if (!tx) throw params.invalid('tx is required: the tx bytes, base64 in a JSON-RPC body, 0x-prefixed hex or a "quoted string" in a URL');
    return tx;
  };

  /** One tx's result as the block's results hold it (CometBFT keeps it in its tx index). */
  const txResultAt = async (location: TxLocation, txs: Uint8Array[]) => {
    if (!b.blockResults)
      throw internalError(
        'this execution layer (evm) keeps no per-tx results in the node; read the receipt from the execution client (eth_getTransactionReceipt)',
      );
    const result = (await b.blockResults(location.height, txs))?.txResults[location.index];
    if (!result) throw internalError(`could not find results for height #${location.height}`);
    return txResultJson(result);
  };

  /** ResultBroadcastTx (rpc/core/types/responses.go): data is HexBytes there, so hex. */
  const broadcastResult = (tx: Uint8Array, check?: Pick<ResponseCheckTx, 'code' | 'data' | 'log' | 'codespace'>) => ({
    code: check?.code ?? 0,
    data: hex(check?.data ?? new Uint8Array(0)),
    log: check?.log ?? '',
    codespace: check?.codespace ?? '',
    hash: hex(txHash(tx)),
  });

  /**
   * Queues a tx and answers once the store keeps it (or with the refusal):
   * an acknowledged tx survives a crash. The app's refusal is an answer, not
   * an error: CometBFT returns its CheckTx response.
   */
  const broadcast = async (tx: Uint8Array, withCheck: boolean) => {
    try {
      const check = (await b.submitTx(tx)) ?? undefined;
      return broadcastResult(tx, withCheck ? check : undefined);
    } catch (err) {
      if (err instanceof CheckTxRejectedError) return broadcastResult(tx, err.response);
      refusal(err);
    }
  };

  return {
    tx: {
      args: ['hash', 'prove'],
      async call(params) {
        const txHash = params.bytes('hash', 'base64');
        if (!txHash || txHash.length !== 32) {
          throw params.invalid(
            `hash must be the 32-byte sha256 of the tx (base64 in a JSON-RPC body, 0x-prefixed hex in a URL), got ${txHash?.length ?? 0} bytes`,
          );
        }
        const prove = params.bool('prove');
        const location = await b.store.getTxLocation(txHash);
        const found = location && (await view.blockAt(location.height));
        if (!location || !found) throw internalError(`tx (${hex(txHash)}) not found`);
        const txs = found.block.data!.txs;
        return {
          hash: hex(txHash),
          height: location.height.toString(),
          index: location.index,
          tx_result: await txResultAt(location, txs),
          tx: b64(txs[location.index]!),
          ...(prove ? { proof: txProof(txs, location.index) } : {}),
        };
      },
    },

    broadcast_tx_async: {
      args: ['tx'],
      // CometBFT answers before CheckTx (rpc/core/mempool.go) and may then lose the tx; here the answer waits
      // until the tx is kept, so an acknowledged tx is never lost. Its success carries no CheckTx data, as CometBFT's.
      call: (params) => broadcast(txParam(params), false),
    },

    broadcast_tx_sync: {
      args: ['tx'],
      call: (params) => broadcast(txParam(params), true),
    },

    broadcast_tx_commit: {
      args: ['tx'],
      async call(params) {
        const tx = txParam(params);
        const wait = b.txCommitted(sha256(tx), BROADCAST_TX_COMMIT_TIMEOUT_MS);
        let check: ResponseCheckTx | undefined;
        try {
          check = (await b.submitTx(tx)) ?? undefined;
        } catch (err) {
          wait.cancel();
          if (err instanceof CheckTxRejectedError) return { check_tx: txResultJson(err.response), tx_result: {}, hash: hex(sha256(tx)), height: '0' };
          refusal(err, 'error on broadcastTxCommit: ');
        }
        const location = await wait.landed.catch(() => {
          throw internalError('timed out waiting for tx to be included in a block');
        });
        const found = await view.blockAt(location.height);
        return {
          check_tx: check ? txResultJson(check) : {},
          tx_result: await txResultAt(location, found!.block.data!.txs),
          hash: hex(sha256(tx)),
          height: location.height.toString(),
        };
      },
    },

    unconfirmed_txs: {
      args: ['limit'],
      async call(params) {
        const txs = b.mempool.peek(perPage(params, 'limit'));
        return { n_txs: String(txs.length), total: String(b.mempool.size), total_bytes: String(b.mempool.bytes), txs: txs.map(b64) };
      },
    },

    num_unconfirmed_txs: {
      args: [],
      async call() {
        const size = String(b.mempool.size);
        return { n_txs: size, total: size, total_bytes: String(b.mempool.bytes), txs: null };
      },
    },
  };
}
