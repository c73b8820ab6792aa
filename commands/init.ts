import { Flags } from '@oclif/core';
import { ConfigError, loadConfig, ownPeerAddress, parseConfigText, renderNodeYml, resolveHome } from '../src/config/index.js';
import { CHAIN_ID_FORM, CHAIN_ID_PATTERN, DEFAULT_FORCED_INCLUSION_EPOCH, HomeError, initHome, type InitResult } from '../src/home/index.js';
import { join } from 'node:path';
// The files that write an EVM or gRPC home, not their folders' indexes: those load the EVM executor and the
// gRPC server too, which init never runs. --join's client is loaded by the init that joins.
import { DEFAULT_EVM_PORTS, initEvmHome, type EvmInitResult } from '../src/exec/evm/devnet.js';
import { ExecutionClientMissingError } from '../src/exec/evm/client-module.js';
import { DEFAULT_EXEC_PORT, initGrpcHome } from '../src/exec/grpc/init.js';
import type { JoinSource } from '../src/home/join.js';
import { NodedCommand } from '../cli/base.js';

/** How long each request to the node named by --join may take. */
const JOIN_TIMEOUT_MS = 10_000;

export default class Init extends NodedCommand {
  static summary = 'Create a node home: config, genesis, keys and data directories.';
  static description = `Writes config/node.yml (every key, with a comment each), config/genesis.json, the signing key config/signer.json and the P2P identity config/node_key.json (both 0600), and the empty data/ and data/cache/ directories.

Refuses a directory that already holds a home unless --force is given; --force replaces the keys and genesis and empties data/.

With --join URL it makes a full node of a running chain instead: it fetches the genesis (GET /genesis), the P2P address and the DA namespaces from the aggregator's RPC listener, checks that the genesis is the aggregator's and that its first block is signed by the genesis proposer, and writes the home with that genesis as is, the aggregator in p2p.peers and the namespaces in node.yml. Nothing is written unless every check passes.`;
  static examples = [
    { description: "Create the home of a new chain's aggregator in ~/.node", command: '<%= config.bin %> <%= command.id %> --chain-id mychain-1 --aggregator' },
    { description: 'Create a full node home elsewhere, as JSON', command: '<%= config.bin %> <%= command.id %> --home /srv/node --chain-id mychain-1 --json' },
    { description: 'Start over: new keys, empty data', command: '<%= config.bin %> <%= command.id %> --chain-id mychain-1 --aggregator --force' },
    {
      description: "Join a running chain as a full node, from its aggregator's RPC",
      command: '<%= config.bin %> <%= command.id %> --join http://10.0.0.5:7331 --home ~/.node-full',
    },
  ];
  static enableJsonFlag = true;
  static flags = {
    'chain-id': Flags.string({
      description: 'Chain id written to genesis.json (letters, digits, ".", "_", "-"; at most 50)',
      default: 'noded-local',
    }),
    aggregator: Flags.boolean({ description: "Make this node the chain's aggregator (block producer)", default: false }),
    join: Flags.string({
      description:
        'Join a running chain as a full node: the RPC URL of its aggregator (http://<host>:7331), from which genesis, P2P address and DA namespaces are fetched and verified',
    }),
    'da-address': Flags.string({
      description: 'With --join: the DA node this full node reads (da.address); the default http://127.0.0.1:26658 when not given',
      dependsOn: ['join'],
    }),
    'forced-inclusion-epoch': Flags.integer({
      description:
        "DA blocks per forced-inclusion epoch, written to genesis as da_epoch_forced_inclusion (ev-node's field): a tx posted with `noded tx post` must be in a block by the end of the epoch after its own",
      default: Number(DEFAULT_FORCED_INCLUSION_EPOCH),
      min: 1,
    }),
    force: Flags.boolean({ description: 'Replace an existing home (its keys and data are lost)', default: false }),
    execution: Flags.string({
      description:
        'Execution layer: kv (built in); evm, which also writes an EVM genesis with one funded development account, jwt.hex, and a supervise: entry that runs the EthereumJS client on loopback ports; or grpc, the kv machine in a process of its own (a supervise: entry running `noded exec serve`) driven over ExecutorService',
      options: ['kv', 'evm', 'grpc'],
      default: 'kv',
    }),
    'el-engine-port': Flags.integer({
      description: "With --execution evm: the EthereumJS client's Engine API port (127.0.0.1)",
      default: DEFAULT_EVM_PORTS.engine,
      min: 1,
      max: 65535,
    }),
    'el-rpc-port': Flags.integer({
      description: 'With --execution evm: its JSON-RPC port for eth_* calls (127.0.0.1)',
      default: DEFAULT_EVM_PORTS.rpc,
      min: 1,
      max: 65535,
    }),
    'el-p2p-port': Flags.integer({
      description: 'With --execution evm: its devp2p port (it binds all interfaces; no peers are dialled)',
      default: DEFAULT_EVM_PORTS.p2p,
      min: 1,
      max: 65535,
    }),
    'exec-port': Flags.integer({
      description: 'With --execution grpc: the port `noded exec serve` listens on (127.0.0.1)',
      default: DEFAULT_EXEC_PORT,
      min: 1,
      max: 65535,
    }),
  };

  async run(): Promise<InitJson> {
    const { flags, metadata } = await this.parse(Init);
    if (flags.join) {
      // oclif lists in metadata.flags the flags it set from their defaults: the others were given.
      const given = ['chain-id', 'aggregator', 'execution', 'forced-inclusion-epoch'].filter((f) => !metadata.flags[f]?.setFromDefault);
      if (given.length > 0) this.fail(`--join takes the chain from the aggregator: leave out ${given.map((f) => `--${f}`).join(', ')}`, 'USAGE', 2);
      return this.join(flags.join, flags);
    }
    const chainId = flags['chain-id'];
    if (!CHAIN_ID_PATTERN.test(chainId)) {
      this.fail(`--chain-id: got ${JSON.stringify(chainId)}, expected ${CHAIN_ID_FORM}`, 'INVALID_FLAG', 2);
    }
    const home = resolveHome(flags.home);
    let result: InitResult | EvmInitResult;
    try {
      const opts = { home, chainId, aggregator: flags.aggregator, force: flags.force, forcedInclusionEpoch: flags['forced-inclusion-epoch'] };
      result =
        flags.execution === 'evm'
          ? initEvmHome(opts, { engine: flags['el-engine-port'], rpc: flags['el-rpc-port'], p2p: flags['el-p2p-port'] })
          : flags.execution === 'grpc'
            ? initGrpcHome(opts, join(this.config.root, 'bin', 'run.js'), flags['exec-port'])
            : initHome(opts);
    } catch (err) {
      if (err instanceof HomeError || err instanceof ExecutionClientMissingError) this.fail(err.message, err.code);
      throw err;
    }
    this.log(`Initialised ${result.aggregator ? 'an aggregator' : 'a full node'} home for chain ${result.chainId} in ${home}`);
    const devAccount = (result as Partial<EvmInitResult>).dev_account;
    const json = this.report(result, flags.home);
    if (devAccount) {
      this.log(`EVM development account (funded in config/el-genesis.json): ${devAccount.address}`);
      this.log(`  private key ${devAccount.private_key}: for development only, it is printed in the clear; never fund it on a real network`);
    }
    this.logStart(flags.home, home);
    return { ...json, ...(devAccount ? { dev_account: devAccount } : {}) };
  }

  /** `init --join URL`: everything is fetched and verified before anything is written. */
  private async join(url: string, flags: { home?: string; force: boolean; 'da-address'?: string }): Promise<InitJson> {
    const daAddress = flags['da-address'];
    if (daAddress !== undefined) {
      try {
        parseConfigText(renderNodeYml({ 'da.address': daAddress }), '--da-address');
      } catch (err) {
        if (err instanceof ConfigError)
          this.fail(`--da-address: got ${JSON.stringify(daAddress)}, expected an http(s) URL like http://127.0.0.1:26658`, 'INVALID_FLAG', 2);
        throw err;
      }
    }
    const home = resolveHome(flags.home);
    const { JoinError, fetchJoinSource, writeJoinedHome } = await import('../src/home/join.js');
    let source: JoinSource;
    let result: InitResult;
    try {
      source = await fetchJoinSource(url, JOIN_TIMEOUT_MS);
      result = writeJoinedHome({ home, force: flags.force, source, daAddress });
    } catch (err) {
      if (err instanceof JoinError) this.fail(err.message, err.code, err.exit);
      if (err instanceof HomeError) this.fail(err.message, err.code);
      throw err;
    }
    const config = loadConfig({ home, env: {} });
    this.log(`Joined chain ${result.chainId} from ${source.url}: a full node home in ${home}`);
    const json = this.report(result, flags.home);
    this.log(
      `Genesis: as ${source.url} serves it; its block ${source.genesis.initialHeight} is signed by the genesis proposer ${Buffer.from(source.genesis.proposerAddress).toString('base64')}`,
    );
    this.log(`Peer (p2p.peers): ${source.peer}`);
    this.log(
      `DA: reads ${config.da.address} (da.address${daAddress ? '' : ', the default: set it to the DA node this machine reads'}), namespace ${source.namespaces.header}${source.namespaces.data !== source.namespaces.header ? `, data namespace ${source.namespaces.data}` : ''}`,
    );
    this.logStart(flags.home, home);
    return {
      ...json,
      joined: {
        url: source.url,
        peer: source.peer,
        da_address: config.da.address,
        header_namespace: source.namespaces.header,
        data_namespace: source.namespaces.data,
      },
    };
  }

  /** The lines every init prints about the home it wrote, and its --json answer. */
  private report(result: InitResult, homeFlag: string | undefined): InitJson {
    const home = resolveHome(homeFlag);
    const p2pAddress = ownPeerAddress(loadConfig({ home, env: {} }).p2p.listen_address, result.peerId);
    for (const path of result.created) this.log(`  created ${path}`);
    this.log(`P2P address: ${p2pAddress}`);
    this.log("  other nodes list it in p2p.peers; put this machine's public IP in place of 127.0.0.1 for nodes elsewhere");
    return {
      home: result.home,
      chain_id: result.chainId,
      aggregator: result.aggregator,
      created: result.created,
      signer_address: result.signerAddress,
      peer_id: result.peerId,
      p2p_address: p2pAddress,
    };
  }

  private logStart(homeFlag: string | undefined, home: string): void {
    this.log(`Start it with: noded start${homeFlag ? ` --home ${home}` : ''}`);
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
  /** With --join: where the chain came from and how this node follows it. */
  joined?: { url: string; peer: string; da_address: string; header_namespace: string; data_namespace: string };
}
