import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { homePaths, type ConfigOverrides, type SuperviseEntryYaml } from '../../config/index.js';
import { initHome, type InitOptions, type InitResult } from '../../home/index.js';
import { builtFile } from '../../util/index.js';
import { ethereumJsCli } from './client-module.js';

/** Loopback ports of the EthereumJS client `init --execution evm` sets up. */
export interface EvmDevnetPorts {
  engine: number;
  rpc: number;
  /** Its devp2p port: it binds 0.0.0.0 even with no peers. */
  p2p: number;
}

export const DEFAULT_EVM_PORTS: EvmDevnetPorts = { engine: 8551, rpc: 8545, p2p: 30303 };

/** EVM chain id of devnets made by `init --execution evm`. */
export const EVM_DEVNET_CHAIN_ID = 1337;

export interface DevAccount {
  /** EIP-55 checksummed. */
  address: string;
  /** 0x and 64 hex digits: a development key, printed in the clear. */
  private_key: string;
}

export interface EvmInitResult extends InitResult {
  dev_account: DevAccount;
}

const EL_GENESIS = 'config/el-genesis.json';
const JWT_FILE = 'config/jwt.hex';
const EL_DATA_DIR = 'data/evm';
/** 1,000,000 ether in wei. */
const DEV_BALANCE = 10n ** 24n;

/** The EIP-55 form of a 20-byte address. */
function checksummed(address: Uint8Array): string {
  const hex = Buffer.from(address).toString('hex');
  const hash = Buffer.from(keccak_256(new TextEncoder().encode(hex))).toString('hex');
  return `0x${[...hex].map((c, i) => (parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c)).join('')}`;
}

export function newDevAccount(): DevAccount {
  const secret = secp256k1.utils.randomSecretKey();
  const publicKey = secp256k1.getPublicKey(secret, false);
  return { address: checksummed(keccak_256(publicKey.subarray(1)).subarray(12)), private_key: `0x${Buffer.from(secret).toString('hex')}` };
}

/**
 * A geth-style genesis that EthereumJS runs post-merge from block 0 with the
 * V3 Engine methods (DESIGN.md §14: Cancun on, Prague off), one funded account.
 */
export function evmGenesis(devAddress: string, now: Date): object {
  return {
    config: {
      chainId: EVM_DEVNET_CHAIN_ID,
      homesteadBlock: 0,
      eip150Block: 0,
      eip155Block: 0,
      eip158Block: 0,
      byzantiumBlock: 0,
      constantinopleBlock: 0, // prettier-ignore
      petersburgBlock: 0,
      istanbulBlock: 0,
      berlinBlock: 0,
      londonBlock: 0,
      mergeNetsplitBlock: 0, // prettier-ignore
      terminalTotalDifficulty: 0,
      terminalTotalDifficultyPassed: true,
      shanghaiTime: 0,
      cancunTime: 0,
    },
    nonce: '0x0',
    timestamp: `0x${Math.floor(now.getTime() / 1000).toString(16)}`,
    extraData: '0x',
    gasLimit: '0x1c9c380',
    difficulty: '0x0',
    mixHash: `0x${'0'.repeat(64)}`,
    coinbase: `0x${'0'.repeat(40)}`,
    alloc: { [devAddress]: { balance: `0x${DEV_BALANCE.toString(16)}` } },
    number: '0x0',
    gasUsed: '0x0',
    parentHash: `0x${'0'.repeat(64)}`,
    baseFeePerGas: '0x7',
    excessBlobGas: '0x0',
    blobGasUsed: '0x0',
  };
}

/** The launcher of the EthereumJS client (ethereumjs.ts beside this file, as built). */
const LAUNCHER = builtFile(import.meta.url, './ethereumjs.js');

/**
 * The EthereumJS client's command line, paths relative to the home it runs in:
 * the launcher, which runs the client or says how to install it. Throws
 * ExecutionClientMissingError when the client is not installed.
 */
export function ethereumJsArgs(ports: EvmDevnetPorts): string[] {
  ethereumJsCli();
  // prettier-ignore
  return [
    LAUNCHER, '--gethGenesis', EL_GENESIS, '--dataDir', EL_DATA_DIR,
    '--rpc', '--rpcAddr', '127.0.0.1', '--rpcPort', String(ports.rpc),
    '--rpcEngine', '--rpcEngineAddr', '127.0.0.1', '--rpcEnginePort', String(ports.engine), '--jwtSecret', JWT_FILE,
    '--port', String(ports.p2p), '--maxPeers', '0', '--discV4', 'false', '--discDns', 'false',
    // `--logFile false` would be read as a file named "false": `--no-logFile` turns it off.
    '--no-logFile', '--isSingleNode',
  ];
}

/**
 * `noded init --execution evm`: a home whose node drives the EthereumJS client
 * (`@ethereumjs/client`) over the Engine API and supervises it, so `noded start`
 * alone runs an EVM rollup. Writes config/el-genesis.json and config/jwt.hex
 * (0600); the client keeps its database in data/evm (execution.db_path).
 */
export function initEvmHome(opts: InitOptions, ports: EvmDevnetPorts = DEFAULT_EVM_PORTS): EvmInitResult {
  const account = newDevAccount();
  const config: ConfigOverrides = {
    ...opts.config,
    'execution.type': 'evm',
    'execution.engine_url': `http://127.0.0.1:${ports.engine}`,
    'execution.eth_url': `http://127.0.0.1:${ports.rpc}`,
    'execution.jwt_secret_file': JWT_FILE,
    'execution.db_path': EL_DATA_DIR,
  };
  const supervise: SuperviseEntryYaml[] = [
    // EthereumJS takes about 8 s to exit after SIGTERM.
    { name: 'ethereumjs', command: process.execPath, args: ethereumJsArgs(ports), ready: `http://127.0.0.1:${ports.engine}`, stop_grace: '15s' },
  ];
  const result = initHome({ ...opts, config, supervise });
  const home = homePaths(opts.home).home;
  const genesisFile = join(home, EL_GENESIS);
  writeFileSync(genesisFile, JSON.stringify(evmGenesis(account.address, opts.now ?? new Date()), null, 2) + '\n');
  const jwtFile = join(home, JWT_FILE);
  writeFileSync(jwtFile, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
  return { ...result, created: [...result.created, genesisFile, jwtFile], dev_account: account };
}
