import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { engineBlockNumber, readJwtSecret } from '../../src/doctor/index.js';
import { freePort, waitFor, WaitAborted } from '../helpers/daemon.js';

/** Post-merge from genesis with the V3 Engine methods (DESIGN.md §14: Cancun on, Prague off). */
const GENESIS = {
  config: {
    chainId: 1337,
    homesteadBlock: 0,
    eip150Block: 0,
    eip155Block: 0,
    eip158Block: 0,
    byzantiumBlock: 0,
    constantinopleBlock: 0,
    petersburgBlock: 0,
    istanbulBlock: 0,
    berlinBlock: 0,
    londonBlock: 0,
    mergeNetsplitBlock: 0,
    terminalTotalDifficulty: 0,
    terminalTotalDifficultyPassed: true,
    shanghaiTime: 0,
    cancunTime: 0,
  },
  nonce: '0x0',
  timestamp: '0x0',
  extraData: '0x',
  gasLimit: '0x1c9c380',
  difficulty: '0x0',
  mixHash: `0x${'0'.repeat(64)}`,
  coinbase: `0x${'0'.repeat(40)}`,
  alloc: {},
  number: '0x0',
  gasUsed: '0x0',
  parentHash: `0x${'0'.repeat(64)}`,
  baseFeePerGas: '0x7',
  excessBlobGas: '0x0',
  blobGasUsed: '0x0',
};

const CLI = join(dirname(createRequire(import.meta.url).resolve('@ethereumjs/client/package.json')), 'dist', 'esm', 'bin', 'cli.js');

const running = new Set<EthereumJs>();

/** The real EthereumJS execution client (`@ethereumjs/client` 0.10.5), on free ports, with its Engine API behind a JWT. */
export class EthereumJs {
  output = '';
  readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly engineUrl: string,
    readonly jwtFile: string,
    readonly dataDir: string,
  ) {
    child.stdout!.on('data', (d) => (this.output += d));
    child.stderr!.on('data', (d) => (this.output += d));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    running.add(this);
  }

  /** Writes genesis and (unless given) a fresh jwt.hex in `dir`, starts the client, and waits until eth_blockNumber answers on the Engine port. */
  static async start(dir: string, opts: { jwtFile?: string; dataDir?: string; enginePort?: number } = {}): Promise<EthereumJs> {
    mkdirSync(dir, { recursive: true });
    const genesis = join(dir, 'genesis.json');
    writeFileSync(genesis, JSON.stringify(GENESIS));
    const jwtFile = opts.jwtFile ?? join(dir, 'jwt.hex');
    if (!opts.jwtFile) writeFileSync(jwtFile, randomBytes(32).toString('hex'));
    const dataDir = opts.dataDir ?? join(dir, 'data');
    const [rpcPort, enginePort, p2pPort] = [await freePort(), opts.enginePort ?? (await freePort()), await freePort()];
    // prettier-ignore
    const args = [
      CLI, '--gethGenesis', genesis, '--dataDir', dataDir, '--rpc', '--rpcAddr', '127.0.0.1', '--rpcPort', String(rpcPort),
      '--rpcEngine', '--rpcEngineAddr', '127.0.0.1', '--rpcEnginePort', String(enginePort), '--jwtSecret', jwtFile,
      '--port', String(p2pPort), '--maxPeers', '0', '--discV4', 'false', '--discDns', 'false', '--no-logFile', '--isSingleNode',
    ];
    // `--logFile false` would be read as a file named "false" (a daily log in the cwd): `--no-logFile` turns it off.
    const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const el = new EthereumJs(child, `http://127.0.0.1:${enginePort}`, jwtFile, dataDir);
    const secret = readJwtSecret(jwtFile);
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new WaitAborted(`EthereumJS exited with ${child.exitCode}:\n${el.output.slice(-2000)}`);
        const answer = await engineBlockNumber(el.engineUrl, secret, 1000);
        return answer.ok;
      },
      'EthereumJS to answer eth_blockNumber on its Engine API',
      30_000,
      200,
    );
    return el;
  }

  /** SIGKILL: after SIGINT it takes about 8 s to exit, and nothing here needs a clean stop. */
  kill(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    running.delete(this);
    return this.exited;
  }
}

export async function killAllEthereumJs(): Promise<void> {
  await Promise.all([...running].map((el) => el.kill()));
}
