export {
  HaCoordinator,
  FenceRejectedError,
  deadlineMarginMs,
  type FencedBlock,
  type HaParts,
  type HaRole,
  type HaSettings,
  type LeaderDuties,
  type TakeoverChain,
} from './coordinator.js';
export { checkEtcdReachable, createEtcdClient, etcdFailureCause, etcdSettingsOf, haKeyPrefix, type EtcdFailureCause, type EtcdSettings } from './etcd.js';
export { RECORDED_BLOCKS, decodeSubmission, encodeLeader, haKeys, type HaKeys, type LeaderInfo, type RecordedHead } from './keys.js';
export { readHaStatus, stepDown, StepDownError, type EtcdMemberHealth, type HaStatusReport } from './admin.js';
export { forwardTx, type ForwardOptions } from './forward.js';
