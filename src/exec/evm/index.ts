export { EngineClient, EngineError, EngineRpcError, EngineUnreachableError, type EngineClientOptions } from './engine.js';
export { EvmExecutor, ExecutionSyncError, ExtensionUnsupportedError, InvalidPayloadError, type EvmExecutorOptions } from './evm.js';
export { JwtSecretError, engineJwt, readJwtSecret } from './jwt.js';
export {
  DEFAULT_EVM_PORTS,
  EVM_DEVNET_CHAIN_ID,
  ethereumJsArgs,
  evmGenesis,
  initEvmHome,
  newDevAccount,
  type DevAccount,
  type EvmDevnetPorts,
  type EvmInitResult,
} from './devnet.js';
export { ETHEREUMJS_CLIENT, ExecutionClientMissingError, ethereumJsCli } from './client-module.js';
