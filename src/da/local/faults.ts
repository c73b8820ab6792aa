/**
 * Fault switches of the built-in DA server, for tests: each one imitates a way a
 * real celestia node lets the submitter down.
 */

import { DaErrorText } from '../types.js';

export type SubmitFault = 'already_in_mempool' | 'already_in_cache' | 'insufficient_funds';

/** The error text `blob.Submit` fails with for each fault. */
export const SUBMIT_FAULT_TEXT: Record<SubmitFault, string> = {
  already_in_mempool: DaErrorText.alreadyInMempool,
  already_in_cache: DaErrorText.txInCache,
  insufficient_funds: DaErrorText.insufficientFunds,
};

export interface DaFaults {
  /** Close the listening socket and every open connection (clients see ECONNREFUSED); off listens again on the same port. */
  refuse: boolean;
  /**
   * Milliseconds every JSON-RPC request waits before it is handled (0 = none).
   * A client that hangs up meanwhile cancels it, as Go's net/http cancels the
   * request context celestia-node's handler runs in: nothing is submitted.
   */
  delayMs: number;
  /**
   * How many more accepted `blob.Submit`s are taken and included in the next DA
   * block while their connection is dropped without an answer, as when the
   * connection to a celestia node breaks after it broadcast the PFB (0 = none).
   * Counts down as submissions are dropped.
   */
  dropSubmitAnswers: number;
  /**
   * Milliseconds an accepted `blob.Submit` is answered after the DA block that
   * includes it (0 = at once), as a celestia node confirming a tx on a slow
   * chain: beyond the client's timeout, the blobs are included unanswered.
   */
  slowSubmitAnswersMs: number;
  /** `header.SyncState` reports the node 100 heights behind (`to_height = height + 100`). */
  notSynced: boolean;
  /** Fail `blob.Submit` with celestia's text of sdk code 19 or code 5, or CometBFT's "tx already exists in cache"; null = submissions succeed. */
  submitError: SubmitFault | null;
  /**
   * How many more submissions fail with `submitError`; 0 = every one until the
   * switch is cleared. Counts down as submissions fail; at 0 after counting
   * down, `submitError` clears itself.
   */
  submitErrorCount: number;
  /** Amount `state.Balance` reports (utia, as a decimal string); null = a large default. */
  balance: string | null;
  /** The gas price the server estimates (utia), as a busy network would raise it; null = celestia-app's default minimum, 0.004. */
  estimatedGasPrice: number | null;
}

export const NO_FAULTS: Readonly<DaFaults> = Object.freeze({
  refuse: false,
  delayMs: 0,
  dropSubmitAnswers: 0,
  slowSubmitAnswersMs: 0,
  notSynced: false,
  submitError: null,
  submitErrorCount: 0,
  balance: null,
  estimatedGasPrice: null,
});

/** A fault switch given a value it cannot take; `field` names it. */
export class FaultsError extends Error {
  readonly code = 'INVALID_FAULTS';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const wholeNumber = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

const FIELDS: Record<keyof DaFaults, { expected: string; valid: (v: unknown) => boolean }> = {
  refuse: { expected: 'true or false', valid: (v) => typeof v === 'boolean' },
  delayMs: { expected: 'a whole number of milliseconds >= 0', valid: wholeNumber },
  dropSubmitAnswers: { expected: 'a whole number >= 0', valid: wholeNumber },
  slowSubmitAnswersMs: { expected: 'a whole number of milliseconds >= 0', valid: wholeNumber },
  notSynced: { expected: 'true or false', valid: (v) => typeof v === 'boolean' },
  submitError: {
    expected: '"already_in_mempool", "already_in_cache", "insufficient_funds" or null',
    valid: (v) => v === null || (typeof v === 'string' && Object.hasOwn(SUBMIT_FAULT_TEXT, v)),
  },
  submitErrorCount: { expected: 'a whole number >= 0 (0 = until cleared)', valid: wholeNumber },
  balance: { expected: 'an amount in utia as a string of digits, or null', valid: (v) => v === null || (typeof v === 'string' && /^\d{1,40}$/.test(v)) },
  estimatedGasPrice: { expected: 'a gas price >= 0 in utia, or null', valid: (v) => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0) },
};

/**
 * Checks a patch of fault switches (the JSON body of `POST /faults`, or what a
 * test passes to `setFaults`); throws a FaultsError naming the first bad field.
 */
export function parseFaultsPatch(body: unknown): Partial<DaFaults> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new FaultsError('(body)', `expected a JSON object of fault switches (${Object.keys(FIELDS).join(', ')})`);
  }
  const patch: Partial<DaFaults> = {};
  for (const [key, value] of Object.entries(body)) {
    const field = FIELDS[key as keyof DaFaults];
    if (!field) throw new FaultsError(key, `unknown fault switch "${key}"; known: ${Object.keys(FIELDS).join(', ')}`);
    if (value === undefined) continue;
    if (!field.valid(value)) throw new FaultsError(key, `${key}: got ${JSON.stringify(value)}, expected ${field.expected}`);
    (patch as Record<string, unknown>)[key] = value;
  }
  return patch;
}

/**
 * The switches after `patch`. Setting `submitError` without `submitErrorCount`
 * means "until cleared" (count 0); clearing it resets the count.
 */
export function applyFaultsPatch(current: DaFaults, patch: Partial<DaFaults>): DaFaults {
  const next: DaFaults = { ...current, ...patch };
  if (patch.submitError !== undefined && patch.submitErrorCount === undefined) next.submitErrorCount = 0;
  if (next.submitError === null) next.submitErrorCount = 0;
  return next;
}
