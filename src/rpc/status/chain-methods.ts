import type { ValidatorUpdate } from 'cosmjs-types/tendermint/abci/types';
import type { ConsensusParams } from 'cosmjs-types/tendermint/types/params';
import { decodeBlock, headerHash } from '../../types/index.js';
import type { ChainView, StatusMethod } from './chain-view.js';
import { NO_BLOCK_ID, NO_COMMIT, b64, blockId, commitJson, eventsJson, headerJson, hex, rfc3339Nano, txResultJson, type HashedBlock } from './encoding.js';
import { internalError, type CallParams } from './jsonrpc.js';

/** Most block metas one `blockchain` call returns (rpc/core/blocks.go, BlockchainInfo). */
const BLOCKCHAIN_LIMIT = 20n;
/** CometBFT's page sizes (rpc/core/env.go): default and most. */
const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;

/** A block in CometBFT's layout (types/block.go, Block). */
function blockJson(found: HashedBlock, previous: HashedBlock | null) {
  return {
    header: headerJson(found.block.header!.header!, previous),
    data: { txs: found.block.data!.txs.map(b64) },
    evidence: { evidence: [] },
    last_commit: previous ? commitJson(previous) : NO_COMMIT,
  };
}

/** per_page as CometBFT's validatePerPage reads it: absent or below 1 is the default, above the most is the most. */
export function perPage(params: CallParams, name: string): number {
  const asked = params.int(name);
  if (asked === undefined || asked < 1n) return DEFAULT_PER_PAGE;
  return asked > BigInt(MAX_PER_PAGE) ? MAX_PER_PAGE : Number(asked);
}

/**
 * The proposer's ed25519 public key from a block's `signer.pub_key`: the raw
 * 32 bytes this node first wrote, or the libp2p-marshalled key ev-node writes
 * (protobuf PublicKey{Type: Ed25519, Data}, types/signer.go).
 */
function signerPublicKey(pubKey: Uint8Array): Uint8Array | null {
  if (pubKey.length === 32) return pubKey;
  const libp2pEd25519 = [0x08, 0x01, 0x12, 0x20];
  return pubKey.length === 36 && libp2pEd25519.every((b, i) => pubKey[i] === b) ? pubKey.subarray(4) : null;
}

/** The validator CometBFT would list: the rollup has one, the proposer, with all the voting power. */
async function proposer(view: ChainView) {
  const b = view.backend;
  let key = b.aggregator ? b.signer.publicKey : null;
  if (!key) {
    const latest = await view.blockAt(view.latest());
    key = latest ? signerPublicKey(latest.block.header!.signer!.pubKey) : null;
  }
  if (!key)
    throw internalError("a full node learns the proposer's public key from a block's signer, and this one has no block yet; ask again after its first block");
  return { address: hex(b.genesis.proposerAddress), pub_key: { type: 'tendermint/PubKeyEd25519', value: b64(key) } };
}

/** Consensus params in CometBFT's layout (types/params.go), as the genesis document and block_results write them. */
function consensusParamsJson(p: Partial<Pick<ConsensusParams, 'block' | 'evidence' | 'validator' | 'version' | 'abci'>>) {
  // A Go time.Duration is written as its nanoseconds.
  const durationNanos = (d: { seconds: bigint; nanos: number } | undefined) => (d ? (d.seconds * 1_000_000_000n + BigInt(d.nanos)).toString() : '0');
  return {
    block: p.block ? { max_bytes: p.block.maxBytes.toString(), max_gas: p.block.maxGas.toString() } : null,
    evidence: p.evidence
      ? {
          max_age_num_blocks: p.evidence.maxAgeNumBlocks.toString(),
          max_age_duration: durationNanos(p.evidence.maxAgeDuration),
          max_bytes: p.evidence.maxBytes.toString(),
        }
      : null,
    validator: p.validator ? { pub_key_types: p.validator.pubKeyTypes } : null,
    version: p.version ? { app: p.version.app.toString() } : null,
    abci: p.abci ? { vote_extensions_enable_height: p.abci.voteExtensionsEnableHeight.toString() } : null,
  };
}

/** A ValidatorUpdate as CometBFT writes the protobuf type: the key as its `Sum` oneof, which CosmJS reads. */
const validatorUpdateJson = (u: ValidatorUpdate) => ({
  pub_key: {
    Sum: {
      type: u.pubKey.ed25519 ? 'tendermint.crypto.PublicKey_Ed25519' : 'tendermint.crypto.PublicKey_Secp256K1',
      value: u.pubKey.ed25519 ? { ed25519: b64(u.pubKey.ed25519) } : { secp256k1: b64(u.pubKey.secp256k1 ?? new Uint8Array(0)) },
    },
  },
  power: u.power.toString(),
});

/** A Go slice decoded from protobuf: empty is nil, written null. */
const listOrNull = <T, R>(items: T[], map: (item: T) => R): R[] | null => (items.length > 0 ? items.map(map) : null);

/** CometBFT's info methods over blocks (rpc/core/blocks.go, consensus.go, net.go), from the node's store. */
export function chainMethods(view: ChainView): Record<string, StatusMethod> {
  const b = view.backend;
  return {
    block: {
      args: ['height'],
      async call(params) {
        const height = view.height(params);
        const found = await view.blockAt(height);
        // Before the first block CometBFT answers an empty block id and no block.
        if (!found) return { block_id: NO_BLOCK_ID, block: null };
        return { block_id: blockId(found.hash), block: blockJson(found, await view.previousOf(height)) };
      },
    },

    blockchain: {
      args: ['minHeight', 'maxHeight'],
      async call(params) {
        // filterMinMax (rpc/core/blocks.go): at most 20 metas, newest first, clamped to what the store holds.
        const latest = view.latest();
        let min = params.int('minHeight') ?? 0n;
        let max = params.int('maxHeight') ?? 0n;
        if (min < 0n || max < 0n) throw internalError('heights must be non-negative');
        if (min === 0n) min = 1n;
        if (max === 0n || max > latest) max = latest;
        const base = view.base();
        if (min < base) min = base;
        if (min < max - BLOCKCHAIN_LIMIT + 1n) min = max - BLOCKCHAIN_LIMIT + 1n;
        if (min > max) throw internalError(`min height ${min} can't be greater than max height ${max}`);
        const stored: Array<{ bytes: Uint8Array; found: HashedBlock }> = [];
        for await (const batch of b.store.blocksInRange(min > base ? min - 1n : min, max)) {
          for (const { bytes } of batch) {
            const block = decodeBlock(bytes);
            stored.push({ bytes, found: { block, hash: headerHash(block.header!.header!) } });
          }
        }
        const metas = [];
        for (let i = stored.length - 1; i >= 0; i--) {
          const { bytes, found } = stored[i]!;
          const header = found.block.header!.header!;
          if (header.height < min) break;
          metas.push({
            block_id: blockId(found.hash),
            block_size: String(bytes.length),
            header: headerJson(header, i > 0 ? stored[i - 1]!.found : null),
            num_txs: String(found.block.data!.txs.length),
          });
        }
        return { last_height: latest.toString(), block_metas: metas };
      },
    },

    commit: {
      args: ['height'],
      async call(params) {
        const latest = view.latest();
        const height = view.height(params, latest);
        const found = await view.blockAt(height);
        if (!found) return null;
        return {
          signed_header: { header: headerJson(found.block.header!.header!, await view.previousOf(height)), commit: commitJson(found) },
          // CometBFT calls a commit canonical once the next block carries it as its last commit.
          canonical: height < latest,
        };
      },
    },

    block_results: {
      args: ['height'],
      async call(params) {
        const height = view.height(params);
        if (!b.blockResults) {
          throw internalError(
            'this execution layer (evm) keeps no per-tx results in the node; read the receipts from the execution client (eth_getTransactionReceipt)',
          );
        }
        const found = await view.blockAt(height);
        const results = found ? await b.blockResults(height, found.block.data!.txs) : null;
        // CometBFT's message for a height without results (state/errors.go, ErrNoABCIResponsesForHeight).
        if (!results) throw internalError(`could not find results for height #${height}`);
        return {
          height: height.toString(),
          txs_results: listOrNull(results.txResults, txResultJson),
          finalize_block_events: listOrNull(results.events, (e) => eventsJson([e])[0]),
          validator_updates: listOrNull(results.validatorUpdates, validatorUpdateJson),
          consensus_param_updates: results.consensusParamUpdates ? consensusParamsJson(results.consensusParamUpdates) : null,
          app_hash: b64(results.appHash.length > 0 ? results.appHash : await view.appHashAfter(height)),
        };
      },
    },

    validators: {
      args: ['height', 'page', 'per_page'],
      async call(params) {
        // CometBFT answers for the next height too, the set being known a block ahead (latestUncommittedHeight).
        const height = view.height(params, b.catchingUp() ? view.latest() : view.latest() + 1n);
        // One validator: one page, whatever per_page says (validatePage, rpc/core/env.go).
        const page = params.int('page');
        if (page !== undefined && page !== 1n) throw internalError(`page should be within [1, 1] range, given ${page}`);
        const validator = { ...(await proposer(view)), voting_power: '1', proposer_priority: '0' };
        return { block_height: height.toString(), validators: [validator], count: '1', total: '1' };
      },
    },

    genesis: {
      args: [],
      async call() {
        const g = b.genesis;
        const { address, pub_key } = await proposer(view);
        return {
          genesis: {
            genesis_time: rfc3339Nano(g.startTime),
            chain_id: b.chainId,
            initial_height: g.initialHeight.toString(),
            // CometBFT's defaults (types/params.go), but the block size: a block must fit one DA blob; no gas is metered.
            consensus_params: consensusParamsJson({
              block: { maxBytes: BigInt(b.maxBlockTxBytes), maxGas: -1n },
              evidence: { maxAgeNumBlocks: 100_000n, maxAgeDuration: { seconds: 172_800n, nanos: 0 }, maxBytes: 1_048_576n },
              validator: { pubKeyTypes: ['ed25519'] },
              version: { app: 0n },
              abci: { voteExtensionsEnableHeight: 0n },
            }),
            validators: [{ address, pub_key, power: '1', name: 'aggregator' }],
            // genesis.json sets no app hash; CometBFT writes the empty HexBytes then.
            app_hash: '',
            ...(g.appState ? { app_state: JSON.parse(new TextDecoder().decode(g.appState)) as unknown } : {}),
          },
        };
      },
    },
  };
}
