/** `noded doctor`: the troubleshooting checks of SPEC.md §7, each with a verdict and a remedy. */
export { CHECK_IDS, type Check, type CheckId, type CheckResult, type CheckStatus, type DoctorContext, type RawValue, type Verdict } from './types.js';
export { buildContext, rawConfig, salvageConfig, type DoctorOptions } from './context.js';
export { CHECKS, UnknownCheckError, doctorExitCode, runCheck, runDoctor, selectChecks, type RunOptions } from './run.js';
export { checkList, plainReport, runWithListr, summary, ttyEpilogue } from './render.js';
export { nodeProcess, portHolder, commandLine, type NodeProcess, type PortHolder } from './process.js';
export { JwtSecretError, engineJwt, readJwtSecret } from '../exec/evm/jwt.js';
export { engineBlockNumber } from './checks/engine.js';
