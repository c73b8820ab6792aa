/**
 * The subset of celestia-node's JSON-RPC 2.0 API the node speaks (DESIGN.md §8),
 * as it appears on the wire: positional params, bytes as base64, heights as
 * numbers (celestia writes header heights as strings; both are accepted).
 */

/** A blob as `blob.Submit` takes it and `blob.GetAll` returns it. */
export interface WireBlob {
  /** base64 of the 29-byte namespace (version byte + 28-byte id). */
  namespace: string;
  /** base64 of the blob's bytes. */
  data: string;
  share_version: number;
  /** base64 of the blob's commitment. */
  commitment: string;
  index: number;
}

/**
 * Options of `blob.Submit` (celestia-node's TxConfig, alias SubmitOptions), as
 * its `jsonTxConfig` reads them (state/txclient/tx_config.go): a field left out
 * is its Go zero value, and zero means "unset" — gas_price without
 * is_gas_price_set is ignored (the node estimates), max_gas_price 0 is the
 * node's default cap, gas 0 is estimated. So the client leaves out every field
 * at its unset value and never sends a negative one.
 */
export interface TxConfig {
  gas_price?: number;
  is_gas_price_set?: boolean;
  max_gas_price?: number;
  gas?: number;
  tx_priority?: number;
}

/** `header.SyncState`: synced when `to_height <= height`. */
export interface SyncState {
  id: number;
  height: number;
  from_height: number;
  to_height: number;
  from_hash: string;
  to_hash: string;
  start: string;
  end: string;
  error?: string;
}

/** The part of an ExtendedHeader (`header.NetworkHead`) the node reads. */
export interface WireExtendedHeader {
  header: { chain_id: string; height: string | number; time: string };
}

/** `state.Balance`. */
export interface Balance {
  denom: string;
  amount: string;
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: number | string;
  method: string;
  params: unknown[];
}

export interface JsonRpcError {
  code: number;
  message: string;
}

/** Method names of the subset, in one place for the client and the built-in server. */
export const DaMethod = {
  submit: 'blob.Submit',
  getAll: 'blob.GetAll',
  networkHead: 'header.NetworkHead',
  /** celestia-node nodebuilder/header/header.go, GetByHeight: the DA block's header (its time dates based blocks). */
  headerByHeight: 'header.GetByHeight',
  syncState: 'header.SyncState',
  balance: 'state.Balance',
} as const;

/**
 * celestia-app's default minimum gas price in utia (pkg/appconsts, DefaultMinGasPrice
 * 0.004; 0.002 before v4): what its estimator answers on a quiet network, and the
 * base of celestia-node's default cap, DefaultMaxGasPrice = 100 x it
 * (state/txclient/tx_config.go).
 */
export const CELESTIA_MIN_GAS_PRICE = 0.004;

/**
 * DA blocks a celestia validator keeps a tx in its mempool before dropping it:
 * celestia-app (v6 on) raises mempool.ttl-num-blocks to at least 36
 * (cmd/celestia-appd/cmd, overrideMempoolConfig: minTTLNumBlocks). A PFB whose
 * answer was lost is included within this many blocks, or never.
 */
export const CELESTIA_MEMPOOL_TTL_BLOCKS = 36;

/**
 * Error texts of celestia-node, celestia-app and CometBFT that the built-in DA
 * server answers with and the client recognises, each as its source writes it.
 */
export const DaErrorText = {
  alreadyInMempool: 'broadcast tx error: codespace sdk, code 19: tx already in mempool',
  insufficientFunds: 'broadcast tx error: codespace sdk, code 5: insufficient funds: spendable balance 0utia is smaller than the fee',
  blobTooLarge: 'blob(s) too large',
  heightFromFuture: 'given height is from the future',
  /** celestia-node state/txclient/tx_config.go, ErrGasPriceExceedsLimit. */
  gasPriceExceedsLimit: 'state: estimated gas price exceeds max gas price in tx config',
  /** CometBFT mempool/errors.go, ErrTxInCache: the mempool already holds these exact tx bytes. */
  txInCache: 'tx already exists in cache',
  /** celestia-node blob/service.go, ErrBlobNotFound: GetAll's answer for a height without blobs before v0.15 (#3223). */
  blobNotFound: 'blob: not found',
} as const;

/**
 * go-jsonrpc auth/auth.go, PermissionedProxy: a method called without a
 * permission its `perm` tag asks for. Without a token celestia-node grants
 * only `public` (api/rpc/perms/permissions.go, DefaultPerms).
 */
export const missingPermission = (method: string, perm: string) => `missing permission to invoke '${method}' (need '${perm}')`;
export const MISSING_PERMISSION = /missing permission to invoke '([^']+)' \(need '([^']+)'\)/;
