/** `noded reset soft|hard|evm`: the spec's reset procedures, refused while the node runs, never deleting outside the home and the execution database. */
export { ResetError, planReset, type PlanOptions, type ResetKind, type ResetPlan, type ResetTarget } from './plan.js';
export { describeTarget, dryRunResult, executeReset, type ExecuteOptions, type ResetResult } from './run.js';
export { UnsafePathError, assertInside, canonicalEntry, emptyDir, isWithin, removeEntry } from './safe-remove.js';
export { resetCommand, terminalUi, type ResetUi } from './command.js';
