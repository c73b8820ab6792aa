import { Flags } from '@oclif/core';
import { loadConfig, ownPeerAddress, resolveHome } from '../src/config/index.js';
import { HomeError, initHome, type InitResult } from '../src/home/index.js';
import { DEFAULT_EVM_PORTS, initEvmHome, type EvmInitResult } from '../src/exec/evm/index.js';
import { NodedCommand } from '../cli/base.js';

export default class Init extends NodedCommand {
  static summary = 'Create a node home: config, genesis, keys and data directories.';
  static description = `Writes config/node.yml (every key, with a comment each), config/genesis.json, the signing key config/signer.json and the P2P identity config/node_key.json (both 0600), and the empty data/ and data/cache/ directories.

Refuses a directory that already holds a home unless --force is given; --force replaces the keys and genesis and empties data/.`;
  static examples = [
    { description: 'Create the home of a new chain\'s aggregator in ~/.node', command: '<%= config.bin %> <%= command.id %> --chain-id mychain-1 --aggregator' },
    { description: 'Create a full node home elsewhere, as JSON', command: '<%= config.bin %> <%= command.id %> --home /srv/node --chain-id mychain-1 --json' },
    { description: 'Start over: new keys, empty data', command: '<%= config.bin %> <%= command.id %> --chain-id mychain-1 --aggregator --force' },
  ];
  static enableJsonFlag = true;
  static flags = {
    'chain-id': Flags.string({
      description: 'Chain id written to genesis.json (letters, digits, ".", "_", "-"; at most 50)',
      default: 'noded-local',
    }),
    aggregator: Flags.boolean({ description: 'Make this node the chain\'s aggregator (block producer)', default: false }),
    force: Flags.boolean({ description: 'Replace an existing home (its keys and data are lost)', default: false }),
    execution: Flags.string({
      description: 'Execution layer: kv (built in), or evm, which also writes an EVM genesis with one funded development account, jwt.hex, and a supervise: entry that runs the EthereumJS client on loopback ports',
      options: ['kv', 'evm'],
      default: 'kv',
    }),
    'el-engine-port': Flags.integer({ description: 'With --execution evm: the EthereumJS client\'s Engine API port (127.0.0.1)', default: DEFAULT_EVM_PORTS.engine, min: 1, max: 65535 }),
    'el-rpc-port': Flags.integer({ description: 'With --execution evm: its JSON-RPC port for eth_* calls (127.0.0.1)', default: DEFAULT_EVM_PORTS.rpc, min: 1, max: 65535 }),
    'el-p2p-port': Flags.integer({ description: 'With --execution evm: its devp2p port (it binds all interfaces; no peers are dialled)', default: DEFAULT_EVM_PORTS.p2p, min: 1, max: 65535 }),
  };

  async run(): Promise<InitJson> {
    const { flags } = await this.parse(Init);
    const chainId = flags['chain-id'];
    if (!/^[A-Za-z0-9._-]{1,50}$/.test(chainId)) {
      this.fail(`--chain-id: got ${JSON.stringify(chainId)}, expected 1 to 50 letters, digits, ".", "_" or "-"`, 'INVALID_FLAG', 2);
    }
    const home = resolveHome(flags.home);
    let result: InitResult | EvmInitResult;
    try {
      const opts = { home, chainId, aggregator: flags.aggregator, force: flags.force };
      result =
        flags.execution === 'evm'
          ? initEvmHome(opts, { engine: flags['el-engine-port'], rpc: flags['el-rpc-port'], p2p: flags['el-p2p-port'] })
          : initHome(opts);
    } catch (err) {
      if (err instanceof HomeError) this.fail(err.message, err.code);
      throw err;
    }
    const p2pAddress = ownPeerAddress(loadConfig({ home, env: {} }).p2p.listen_address, result.peerId);
    this.log(`Initialised ${result.aggregator ? 'an aggregator' : 'a full node'} home for chain ${result.chainId} in ${home}`);
    for (const path of result.created) this.log(`  created ${path}`);
    this.log(`P2P address: ${p2pAddress}`);
    this.log('  other nodes list it in p2p.peers; put this machine\'s public IP in place of 127.0.0.1 for nodes elsewhere');
    const devAccount = (result as Partial<EvmInitResult>).dev_account;
    if (devAccount) {
      this.log(`EVM development account (funded in config/el-genesis.json): ${devAccount.address}`);
      this.log(`  private key ${devAccount.private_key}: for development only, it is printed in the clear; never fund it on a real network`);
    }
    this.log(`Start it with: noded start${flags.home ? ` --home ${home}` : ''}`);
    return {
      home: result.home,
      chain_id: result.chainId,
      aggregator: result.aggregator,
      created: result.created,
      signer_address: result.signerAddress,
      peer_id: result.peerId,
      p2p_address: p2pAddress,
      ...(devAccount ? { dev_account: devAccount } : {}),
    };
  }
}

/** `init --json`: snake_case keys, as every other --json answer and the node's own JSON. */
interface InitJson {
  home: string;
  chain_id: string;
  aggregator: boolean;
  created: string[];
  signer_address: string;
  peer_id: string;
  p2p_address: string;
  dev_account?: EvmInitResult['dev_account'];
}
