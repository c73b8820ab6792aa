import { DaErrorText } from '../types.js';
import { goTypeError, paramError, RpcCode, RpcFailure } from './go-jsonrpc.js';

/**
 * celestia-node's TxConfig as its UnmarshalJSON leaves it
 * (state/txclient/tx_config.go): every field at its Go zero value unless sent.
 */
export interface DecodedTxConfig {
  gasPrice: number;
  isGasPriceSet: boolean;
  maxGasPrice: number;
  gas: number;
  txPriority: number;
}

type GoKind = 'float64' | 'bool' | 'uint64' | 'int' | 'string';

/** jsonTxConfig's fields and Go types (tx_config.go); any other key is ignored, as encoding/json ignores unknown fields. */
const FIELDS: Record<string, { kind: GoKind; key?: keyof DecodedTxConfig }> = {
  gas_price: { kind: 'float64', key: 'gasPrice' },
  is_gas_price_set: { kind: 'bool', key: 'isGasPriceSet' },
  max_gas_price: { kind: 'float64', key: 'maxGasPrice' },
  gas: { kind: 'uint64', key: 'gas' },
  tx_priority: { kind: 'int', key: 'txPriority' },
  key_name: { kind: 'string' },
  signer_address: { kind: 'string' },
  fee_granter_address: { kind: 'string' },
};

const GO_INT_MAX = 2 ** 63;

function fits(kind: GoKind, v: unknown): boolean {
  switch (kind) {
    case 'float64':
      return typeof v === 'number';
    case 'bool':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'uint64':
      return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 2 ** 64;
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) && v >= -GO_INT_MAX && v < GO_INT_MAX;
  }
}

/** celestia-node's DefaultGasPrice: "the node estimates" (tx_config.go). */
export const DEFAULT_GAS_PRICE = -1;

/**
 * Decodes `blob.Submit`'s second param as go-jsonrpc and encoding/json do:
 * keys match case-insensitively, unknown keys and nulls are skipped, and the
 * first value of the wrong type fails the call with Go's error text (HTTP 500,
 * code -32700, handler.go).
 */
export function decodeTxConfig(raw: unknown): DecodedTxConfig {
  const fail = (why: string) => paramError('blob.Submit', '*txclient.TxConfig', `unmarshalling TxConfig: ${why}`);
  if (raw === null) {
    // go-jsonrpc hands celestia-node a nil *TxConfig here; what it then does is not the client's business to depend on.
    throw new RpcFailure(RpcCode.invalidParams, 'blob.Submit takes [blobs, TxConfig]: TxConfig is null; send {} for the defaults');
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) throw fail(goTypeError(raw, 'txclient.jsonTxConfig'));
  const out: DecodedTxConfig = { gasPrice: 0, isGasPriceSet: false, maxGasPrice: 0, gas: 0, txPriority: 0 };
  let firstError: RpcFailure | undefined;
  for (const [key, value] of Object.entries(raw)) {
    const name = Object.keys(FIELDS).find((f) => f === key) ?? Object.keys(FIELDS).find((f) => f.toLowerCase() === key.toLowerCase());
    if (name === undefined || value === null) continue;
    const field = FIELDS[name]!;
    if (!fits(field.kind, value)) {
      firstError ??= fail(goTypeError(value, field.kind, { struct: 'jsonTxConfig', name }));
      continue;
    }
    if (field.key) (out as unknown as Record<string, unknown>)[field.key] = value;
  }
  if (firstError) throw firstError;
  return out;
}

/**
 * The gas price celestia-node submits at, or its refusal (txclient/tx_client.go,
 * estimateGasPrice): a set price is used as it is, without the cap; otherwise
 * the estimate, refused above max_gas_price (0 = DefaultMaxGasPrice).
 */
export function submissionGasPrice(config: DecodedTxConfig, estimate: number, defaultCap: number): number {
  const price = config.isGasPriceSet ? config.gasPrice : DEFAULT_GAS_PRICE;
  if (price !== DEFAULT_GAS_PRICE) {
    if (price < 0) {
      // Not matched: celestia-node passes a set negative price on to celestia-app, whose answer is not in its source.
      throw new RpcFailure(RpcCode.methodError, `gas_price ${price} with is_gas_price_set: a price must be >= 0 (or -1 to let the node estimate)`);
    }
    return price;
  }
  const cap = config.maxGasPrice === 0 ? defaultCap : config.maxGasPrice;
  if (estimate > cap) throw new RpcFailure(RpcCode.methodError, DaErrorText.gasPriceExceedsLimit);
  return estimate;
}
