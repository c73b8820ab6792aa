/** Why a DA call failed, as the submitter and the metrics tell causes apart. */
export type DaFailureReason =
  | 'connection_refused'
  | 'timeout'
  | 'unauthorized'
  | 'already_in_mempool'
  | 'insufficient_funds'
  | 'too_big'
  | 'other';

/** The remedy of SPEC.md §7 for each cause, in the operator's words. */
export const DA_REMEDY: Record<DaFailureReason, string> = {
  connection_refused: 'check the DA endpoint (--node.da.address), the auth token, and the DA node sync state',
  timeout: 'check the DA endpoint and the DA node sync state, or raise --node.da.request_timeout',
  unauthorized: 'the DA node rejected the auth token: generate one with the DA node\'s own `auth` command for the network and set da.auth_token',
  already_in_mempool: 'check the balance, fund the account, or raise --node.da.gas_price',
  insufficient_funds: 'fund the DA account',
  too_big: 'the batch is above the DA node\'s blob size limit; it is split and retried (lower da.max_blob_size to match the DA network)',
  other: 'check the DA node\'s logs, the DA endpoint and the auth token',
};

/** A failed DA call: the text says what happened (never the token), `reason` classifies it. */
export class DaError extends Error {
  constructor(
    message: string,
    readonly reason: DaFailureReason,
    /** The sdk error code when the DA node reported one (19, 5, …). */
    readonly sdkCode?: number,
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
  if (code === 19 || /tx already in mempool/i.test(message)) return new DaError(message, 'already_in_mempool', 19);
  if (code === 5 || /insufficient funds/i.test(message)) return new DaError(message, 'insufficient_funds', 5);
  if (/blob\(s\) too large|total blob size too large|too large/i.test(message)) return new DaError(message, 'too_big', code);
  return new DaError(message, 'other', code);
}
