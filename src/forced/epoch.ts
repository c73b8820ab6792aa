/**
 * Forced-inclusion epochs and grace periods, as ev-node defines them
 * (types/epoch.go; block/internal/syncing/syncer.go).
 */

/** What fixes a chain's epochs: genesis da_start_height and da_epoch_forced_inclusion. */
export interface EpochRules {
  daStartHeight: bigint;
  epochSize: bigint;
}

export interface Epoch {
  /** 1 for the epoch starting at da_start_height (ev-node CalculateEpochNumber). */
  number: bigint;
  /** First and last DA heights of the epoch, inclusive. */
  start: bigint;
  end: bigint;
}

/** ev-node types/epoch.go, CalculateEpochBoundaries: the epoch holding `daHeight` (heights before the start are in epoch 1). */
export function epochOf(daHeight: bigint, rules: EpochRules): Epoch {
  const { daStartHeight, epochSize } = rules;
  const number = daHeight < daStartHeight ? 1n : (daHeight - daStartHeight) / epochSize + 1n;
  const start = daStartHeight + (number - 1n) * epochSize;
  return { number, start, end: start + epochSize - 1n };
}

/** The epoch after `epoch`. */
export const nextEpoch = (epoch: Epoch, rules: EpochRules): Epoch => epochOf(epoch.end + 1n, rules);

/** syncer.go baseGracePeriodEpochs: a tx of epoch N must be in a block by the end of epoch N+1. */
export const BASE_GRACE_PERIOD_EPOCHS = 1n;
/** syncer.go maxGracePeriodEpochs: the cap under sustained congestion. */
export const MAX_GRACE_PERIOD_EPOCHS = 4n;
/** syncer.go fullnessThreshold: above this share of the largest blob a DA height counts as full. */
export const FULLNESS_THRESHOLD = 0.8;

/**
 * syncer.go gracePeriodForEpoch: the base grace period, plus one epoch per
 * threshold-sized band the epoch's average block bytes per DA height exceed
 * the fullness threshold by, at most MAX_GRACE_PERIOD_EPOCHS. `blockBytes` is
 * the chain's tx bytes included at each DA height of the epoch; `maxBlobSize`
 * stands for ev-node's DefaultMaxBlobSize.
 */
export function gracePeriodEpochs(epoch: Epoch, blockBytes: (daHeight: bigint) => number, maxBlobSize: number): bigint {
  let total = 0;
  for (let h = epoch.start; h <= epoch.end; h++) total += blockBytes(h);
  const average = Math.floor(total / Number(epoch.end - epoch.start + 1n));
  const threshold = Math.round(FULLNESS_THRESHOLD * maxBlobSize);
  const extra = average > threshold ? BigInt(Math.floor((average - threshold) / threshold)) : 0n;
  const grace = BASE_GRACE_PERIOD_EPOCHS + extra;
  return grace < MAX_GRACE_PERIOD_EPOCHS ? grace : MAX_GRACE_PERIOD_EPOCHS;
}

/**
 * The last DA height a block may hold the epoch's forced txs at (syncer.go:
 * graceBoundary = epochEnd + gracePeriod × epochSize); a block at a DA
 * height past it while one is missing proves the aggregator censored it.
 */
export const graceBoundary = (epoch: Epoch, rules: EpochRules, graceEpochs = BASE_GRACE_PERIOD_EPOCHS): bigint => epoch.end + graceEpochs * rules.epochSize;
