/** The built-in DA server (DESIGN.md §8): `da.local`, `noded start --dev` and `noded da serve`. */
export {
  DEFAULT_ESTIMATED_GAS_PRICE,
  DEFAULT_MAX_GAS_PRICE,
  LocalDa,
  checkAdminListen,
  localCommitment,
  type DaSubmission,
  type LocalDaOptions,
} from './server.js';
export { NO_FAULTS, FaultsError, parseFaultsPatch, type DaFaults, type SubmitFault } from './faults.js';
export { BLOCK_LOG_FILE, LocalDaError } from './block-log.js';
