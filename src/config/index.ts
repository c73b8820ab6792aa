/** Config: the schema, its defaults and help, loading with precedence, the home's layout. */
export {
  SUPERVISE_FIELDS,
  configSchema,
  defaultConfig,
  type Config,
  type ConfigKind,
  type ConfigPath,
  type ConfigSection,
  type SuperviseEntry,
  type SuperviseEntryYaml,
} from './schema.js';
export { configKeys, type ConfigKey } from './keys.js';
export { loadConfig, parseConfigText, type ConfigFlags, type LoadConfigOptions } from './load.js';
export { ConfigError, type ConfigErrorCode } from './errors.js';
export { renderConfigTable, renderNodeYml, type ConfigOverrides } from './render.js';
export { DEV_HOME, homePaths, resolveHome, resolveHomePath, type HomePaths } from './home.js';
export { DURATION_FORM, formatDuration, parseDuration } from './duration.js';
export { formatHostPort, parseHostPort, parsePeerList, splitList, type HostPort } from './address.js';
export {
  PEER_ADDRESS_EXAMPLE,
  PEER_ADDRESS_FORMAT,
  PeerAddressError,
  isPeerId,
  ownPeerAddress,
  parsePeerAddress,
  parsePeerAddresses,
  peerListProblem,
  type HostProtocol,
  type PeerAddress,
} from './peer-address.js';
export { hostListProblem, originAllowed, originListProblem } from './origin.js';
export { NAMESPACE_SIZE, daNamespace, daNamespaces, forcedInclusionNamespace } from './namespace.js';
export {
  defaultPorts,
  flagSuggestion,
  freePortAfter,
  hostPortFlagMove,
  moveAdvice,
  nodeListenerMove,
  portOf,
  tryBind,
  withPort,
  type BindResult,
  type ListenerMove,
} from './suggest.js';
