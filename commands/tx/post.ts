import { Args, Flags } from '@oclif/core';
import { ConfigError, loadConfig, parseDuration, resolveHome } from '../../src/config/index.js';
import { DaError } from '../../src/da/index.js';
import { ForcedInclusionOffError, ForcedTxWaitTimeout, postForcedTx, waitForBlock } from '../../src/forced/index.js';
import { HomeError, readHome } from '../../src/home/index.js';
import { NodeRequestError } from '../../src/client/index.js';
import { NodedCommand } from '../../cli/base.js';
import { configFlags, givenConfigFlags } from '../../cli/config-flags.js';
import { clientFor, nodeFlag } from '../../cli/node-client.js';

/** How often --wait asks the node. */
const WAIT_POLL_MS = 250;

/** The DA flags of the config (`--node.da.*`): where and how to post, as blocks are posted. */
const daFlags = () => Object.fromEntries(Object.entries(configFlags()).filter(([name]) => name.startsWith('node.da.')));

export default class TxPost extends NodedCommand {
  static summary = "Post a transaction straight to the DA layer's forced-inclusion namespace, bypassing the aggregator.";
  static description = `Submits TX as one blob to da.forced_inclusion_namespace of the DA node at da.address (the home's config/node.yml, then --node.da.* flags), with the gas settings blocks are posted with. Prints the DA height that holds it and the DA height by which a block must include it (the end of the epoch after its own, ev-node's grace boundary); a full node rejects a chain that has not included it by then.

TX is the tx's text (a kv tx like key=value), or 0x and hex for raw bytes (an EVM tx). --wait then asks the node (this home's, or --node) until a block holds the tx and prints that block's height.`;
  static examples = [
    { description: 'Force a kv tx into the chain of the node on this home', command: '<%= config.bin %> <%= command.id %> greeting=hello --wait' },
    { description: 'As JSON, to another DA node', command: '<%= config.bin %> <%= command.id %> 0x02f86b… --node.da.address http://10.0.0.7:26658 --json' },
  ];
  static enableJsonFlag = true;
  static args = { tx: Args.string({ description: 'The transaction: its text, or 0x and hex for raw bytes', required: true }) };
  static flags = {
    wait: Flags.boolean({ description: 'Wait until a block holds the tx (asking the node) and print its height', default: false }),
    timeout: Flags.string({ description: 'With --wait: give up after this long, like 90s or 5m', default: '5m', dependsOn: ['wait'] }),
    node: nodeFlag,
    ...daFlags(),
  };

  async run(): Promise<{ da_height: number; deadline_da_height: number; height: number | null }> {
    const { args, flags } = await this.parse(TxPost);
    const tx = /^0x([0-9a-fA-F]{2})+$/.test(args.tx) ? Buffer.from(args.tx.slice(2), 'hex') : Buffer.from(args.tx, 'utf8');
    if (tx.length === 0) this.fail('TX: got an empty transaction, expected its text or 0x and hex', 'INVALID_ARG', 2);
    let timeoutMs = 0;
    try {
      timeoutMs = parseDuration(flags.timeout);
    } catch {
      this.fail(`--timeout: got ${JSON.stringify(flags.timeout)}, expected a duration like 90s or 5m`, 'INVALID_FLAG', 2);
    }
    const home = resolveHome(flags.home);
    let posted;
    try {
      const config = loadConfig({ home, flags: givenConfigFlags(flags) });
      posted = await postForcedTx(config, readHome(home).genesis, tx);
    } catch (err) {
      if (err instanceof ConfigError) this.fail(err.message, err.code, err.fromFlags ? 2 : 1);
      if (err instanceof HomeError) this.fail(err.message, err.code);
      if (err instanceof ForcedInclusionOffError) this.fail(err.message, err.code);
      if (err instanceof DaError) this.fail(`posting to DA failed: ${err.message}; ${err.remedy}`, 'DA_SUBMIT_FAILED');
      throw err;
    }
    this.log(`posted to DA height ${posted.daHeight} (tx hash ${Buffer.from(posted.txHash).toString('hex').toUpperCase()})`);
    this.log(`a block must include it by DA height ${posted.deadlineDaHeight}`);
    let height: bigint | null = null;
    if (flags.wait) {
      const client = await clientFor(flags);
      try {
        height = await waitForBlock(client, posted, { timeoutMs, pollMs: WAIT_POLL_MS });
      } catch (err) {
        if (err instanceof ForcedTxWaitTimeout) this.fail(err.message, err.code);
        if (err instanceof NodeRequestError) this.fail(err.message, 'REQUEST_FAILED');
        throw err;
      }
      this.log(`included in block ${height}`);
    }
    return { da_height: Number(posted.daHeight), deadline_da_height: Number(posted.deadlineDaHeight), height: height === null ? null : Number(height) };
  }
}
