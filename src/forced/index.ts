export {
  BASE_GRACE_PERIOD_EPOCHS,
  MAX_GRACE_PERIOD_EPOCHS,
  epochOf,
  graceBoundary,
  gracePeriodEpochs,
  nextEpoch,
  type Epoch,
  type EpochRules,
} from './epoch.js';
export { readEpoch, type EpochTxs } from './reader.js';
export { ForcedInclusionOffError, ForcedTxWaitTimeout, postForcedTx, waitForBlock, type PostedTx, type TxLookup } from './post.js';
export { CHECKPOINT_KEY, ForcedInclusionQueue, type Checkpoint, type ForcedSelection, type QueueOptions } from './queue.js';
export { CHECKED_KEY, ForcedInclusionVerifier, type ForcedInclusionViolation, type VerifierOptions } from './verifier.js';
