import { Flags } from '@oclif/core';
import { NodedCommand } from '../../cli/base.js';
import { clientFor, nodeFlag } from '../../cli/node-client.js';
import { NodeRequestError, NodeUnreachableError } from '../../src/client/index.js';
import { headerHash } from '../../src/types/index.js';

const HEX_HASH = /^(0x)?[0-9a-fA-F]{64}$/;

/** A block hash given as 64 hex digits or as base64 of 32 bytes. */
function parseHash(text: string): Uint8Array | null {
  if (HEX_HASH.test(text)) return Buffer.from(text.replace(/^0x/, ''), 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === 32 ? bytes : null;
}

export default class BlockGet extends NodedCommand {
  static summary = "Print a block from the node's store RPC, by height or by hash.";
  static description = 'Asks POST /node.v1.StoreService/GetBlock. --json prints exactly the GetBlock JSON. Exits 1 when there is no such block.';
  static examples = [
    { description: 'Block 42 of the node on this home', command: '<%= config.bin %> <%= command.id %> --height 42' },
    { description: 'The latest block, as GetBlock JSON', command: '<%= config.bin %> <%= command.id %> --height 0 --json' },
    { description: 'By header hash, from another node', command: '<%= config.bin %> <%= command.id %> --hash 9F86D0…0A08 --node http://10.0.0.5:7331' },
  ];
  static enableJsonFlag = true;
  static flags = {
    height: Flags.string({ description: 'Block height (0 = latest)', exactlyOne: ['height', 'hash'] }),
    hash: Flags.string({ description: 'Header hash: 64 hex digits or base64', exactlyOne: ['height', 'hash'] }),
    node: nodeFlag,
  };

  async run(): Promise<unknown> {
    const { flags } = await this.parse(BlockGet);
    let selector: { height: bigint } | { hash: Uint8Array };
    if (flags.hash !== undefined) {
      const hash = parseHash(flags.hash);
      if (!hash) this.fail(`--hash: got ${JSON.stringify(flags.hash)}, expected 64 hex digits or the base64 of 32 bytes`, 'INVALID_FLAG', 2);
      selector = { hash };
    } else {
      if (!/^\d{1,20}$/.test(flags.height!) || BigInt(flags.height!) >= 1n << 64n) {
        this.fail(`--height: got ${JSON.stringify(flags.height)}, expected a non-negative integer (0 = latest)`, 'INVALID_FLAG', 2);
      }
      selector = { height: BigInt(flags.height!) };
    }
    const client = await clientFor(flags);
    let result;
    try {
      result = await client.getBlock(selector);
    } catch (err) {
      if (err instanceof NodeUnreachableError) this.fail(err.message, err.code);
      if (err instanceof NodeRequestError) this.fail(err.message, err.connectCode === 'not_found' ? 'NOT_FOUND' : 'REQUEST_FAILED');
      throw err;
    }
    if (this.jsonEnabled()) {
      // The raw body keeps 64-bit integers' exact digits; re-serialising would not.
      process.stdout.write(result.raw.endsWith('\n') ? result.raw : result.raw + '\n');
      return undefined;
    }
    const { block, headerDaHeight, dataDaHeight } = result.response;
    const header = block!.header!.header!;
    const ms = Number(header.time / 1_000_000n);
    this.log(`height      ${header.height}`);
    this.log(`time        ${new Date(ms).toISOString()}`);
    this.log(`hash        ${Buffer.from(headerHash(header)).toString('hex').toUpperCase()}`);
    this.log(`proposer    ${Buffer.from(header.proposerAddress).toString('hex').toUpperCase()}`);
    this.log(`txs         ${block!.data!.txs.length}`);
    this.log(`app hash    ${Buffer.from(header.appHash).toString('hex').toUpperCase()}`);
    this.log(`DA heights  header ${headerDaHeight || 'not yet included'}, data ${dataDaHeight || 'not yet included'}`);
    return undefined;
  }
}
