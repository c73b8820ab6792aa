import { DaErrorText, MISSING_PERMISSION } from './types.js';

/** Why a DA call failed, as the submitter and the metrics tell causes apart. */
export type DaFailureReason =
  | 'connection_refused'
  | 'timeout'
  | 'unauthorized'
  | 'already_in_mempool'
  | 'already_in_cache'
  | 'gas_price_above_cap'
  | 'insufficient_funds'
  | 'too_big'
  | 'blob_not_found'
  | 'other';

/** How an operator makes a token on a celestia node (celestia-node cmd/auth.go: `auth [permission-level]`); blob.Submit needs `write`. */
const DA_TOKEN_COMMAND = 'celestia <light|bridge> auth write --p2p.network <network>';

/** The remedy of SPEC.md §7 for each cause, in the operator's words. */
export const DA_REMEDY: Record<DaFailureReason, string> = {
  connection_refused: 'check the DA endpoint (--node.da.address), the auth token, and the DA node sync state',
  timeout: 'check the DA endpoint and the DA node sync state, or raise --node.da.request_timeout',
  unauthorized: `make a token on the DA node with \`${DA_TOKEN_COMMAND}\` (e.g. \`celestia light auth write --p2p.network mocha\`) and set it as da.auth_token in node.yml, --node.da.auth_token or NODED_DA_AUTH_TOKEN`,
  already_in_mempool: 'check the balance, fund the account, or raise --node.da.gas_price',
  already_in_cache:
    'none at first: the DA node already holds this exact transaction from an earlier attempt; the node looks for it on DA before posting again. If it repeats, check that the DA node is synced and its mempool drains',
  gas_price_above_cap:
    "the DA node's estimated gas price is above the cap: raise --node.da.max_gas_price (0 = the DA node's default cap), or set --node.da.gas_price to the price to pay",
  insufficient_funds: 'fund the DA account',
  too_big: "the batch is above the DA node's blob size limit; it is split and retried (lower da.max_blob_size to match the DA network)",
  blob_not_found: 'none: the DA height holds no blobs in the namespaces asked for',
  other: "check the DA node's logs, the DA endpoint and the auth token",
};

/**
 * Whether the DA node got the request: `refused` = the connection was refused
 * before it was sent; `answered` = the DA node answered (an error); `unknown` =
 * it may have been sent and taken, but no answer came (timeout, the connection
 * dropped): a submission may be included all the same.
 */
export type DaDelivery = 'refused' | 'answered' | 'unknown';

/** A failed DA call: the text says what happened (never the token), `reason` classifies it. */
export class DaError extends Error {
  constructor(
    message: string,
    readonly reason: DaFailureReason,
    /** The sdk error code when the DA node reported one (19, 5, …). */
    readonly sdkCode?: number,
    readonly delivery: DaDelivery = 'answered',
  ) {
    super(message);
    this.name = 'DaError';
  }

  get remedy(): string {
    return DA_REMEDY[this.reason];
  }
}

const SDK_CODE = /codespace:?\s*'?sdk'?,?\s*code:?\s*(\d+)/i;

/** Classifies an error message from the DA node's JSON-RPC error object. */
export function classifyDaMessage(message: string): DaError {
  const sdk = SDK_CODE.exec(message);
  const code = sdk ? Number(sdk[1]) : undefined;
  if (MISSING_PERMISSION.test(message)) return new DaError(message, 'unauthorized');
  if (message.includes(DaErrorText.gasPriceExceedsLimit.replace(/^state: /, ''))) return new DaError(message, 'gas_price_above_cap');
  // Checked before code 19: the SDK reports CometBFT's "tx already exists in cache" as code 19 too (cosmos-sdk client/broadcast.go, CheckCometError).
  if (message.includes(DaErrorText.txInCache)) return new DaError(message, 'already_in_cache', code);
  if (code === 19 || /tx already in mempool/i.test(message)) return new DaError(message, 'already_in_mempool', 19);
  if (code === 5 || /insufficient funds/i.test(message)) return new DaError(message, 'insufficient_funds', 5);
  // go-jsonrpc handler.go refuses a body above celestia-node's request limit (2 x MaxTxSize) with "request bigger than maximum N allowed".
  if (/blob\(s\) too large|total blob size too large|too large|request bigger than maximum/i.test(message)) return new DaError(message, 'too_big', code);
  if (message.includes(DaErrorText.blobNotFound)) return new DaError(message, 'blob_not_found');
  return new DaError(message, 'other', code);
}
