import { hash as digest } from 'node:crypto';
import { forcedInclusionNamespace, type Config } from '../config/index.js';
import { DaClient, blobCommitment, submitOptions } from '../da/index.js';
import type { Genesis } from '../home/index.js';
import { sleep } from '../util/index.js';
import { epochOf, graceBoundary } from './epoch.js';

export interface PostedTx {
  /** sha256 of the tx: its hash in the node's tx index (CometBFT's tx hash). */
  txHash: Uint8Array;
  /** DA height that holds the tx's blob. */
  daHeight: bigint;
  /** The last DA height a block may include it at: its epoch's grace boundary with the base grace period (ev-node syncer.go). */
  deadlineDaHeight: bigint;
}

/** Forced inclusion is off in this config: nothing to post to. */
export class ForcedInclusionOffError extends Error {
  readonly code = 'FORCED_INCLUSION_OFF';
}

/**
 * Posts one tx straight to the chain's forced-inclusion namespace, as one
 * blob holding the raw tx bytes (ev-node apps/evm/server/force_inclusion.go),
 * with the gas settings blocks are posted with (da.gas_price, da.max_gas_price).
 * Throws a DaError when the DA node refuses or cannot be reached.
 */
export async function postForcedTx(config: Config, genesis: Genesis, tx: Uint8Array, signal?: AbortSignal): Promise<PostedTx> {
  const namespace = forcedInclusionNamespace({ ...config, node: { ...config.node, based: false } }, genesis.chainId);
  if (!namespace) {
    throw new ForcedInclusionOffError(
      "forced inclusion is off: da.forced_inclusion_namespace is empty; set it in config/node.yml (or --node.da.forced_inclusion_namespace) to the namespace the chain's nodes read",
    );
  }
  const da = new DaClient({ address: config.da.address, authToken: config.da.auth_token, requestTimeoutMs: config.da.request_timeout });
  try {
    const daHeight = await da.submit(
      [{ namespace, data: tx, commitment: blobCommitment(namespace, tx) }],
      submitOptions({ gasPrice: config.da.gas_price, maxGasPrice: config.da.max_gas_price }),
      signal,
    );
    const rules = { daStartHeight: genesis.daStartHeight, epochSize: genesis.daEpochForcedInclusion };
    return { txHash: digest('sha256', tx, 'buffer'), daHeight, deadlineDaHeight: graceBoundary(epochOf(daHeight, rules), rules) };
  } finally {
    await da.close();
  }
}

/** The part of a node client `waitForBlock` asks: where the tx landed, or null until a block holds it. */
export interface TxLookup {
  txHeight(txHash: Uint8Array): Promise<bigint | null>;
}

/** The tx was not in a block within the wait; says how long and what to check. */
export class ForcedTxWaitTimeout extends Error {
  readonly code = 'WAIT_TIMEOUT';
}

/**
 * Polls the node's tx index until a block holds the tx, and resolves with that
 * block's height. The node includes a forced tx only once DA's head has passed
 * its epoch's end, so this can take a whole epoch of DA blocks.
 */
export async function waitForBlock(node: TxLookup, posted: PostedTx, opts: { timeoutMs: number; pollMs: number; signal?: AbortSignal }): Promise<bigint> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const height = await node.txHeight(posted.txHash);
    if (height !== null) return height;
    if (Date.now() >= deadline) {
      throw new ForcedTxWaitTimeout(
        `no block holds the tx after ${Math.round(opts.timeoutMs / 1000)}s; it must be in one by DA height ${posted.deadlineDaHeight}: check that the node reads da.forced_inclusion_namespace, or wait longer with --timeout`,
      );
    }
    await sleep(opts.pollMs, opts.signal);
  }
}
