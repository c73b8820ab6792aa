/** `noded reset soft|hard|evm`: the spec's reset procedures, refused while the node runs or on a directory that is no home; they delete only the home's own entries and the execution database. */
export { ResetError, planReset, type PlanOptions, type ResetKind, type ResetPlan, type ResetTarget } from './plan.js';
export { describeTarget, dryRunResult, executeReset, type ExecuteOptions, type ResetResult } from './run.js';
export { UnsafePathError, assertInside, canonicalEntry, emptyDir, isWithin, removeEntry } from './safe-remove.js';
export { resetCommand, terminalUi, type ResetUi } from './command.js';
