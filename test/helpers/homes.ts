import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCli, tempHome } from './daemon.js';

/** Node homes made with `noded init` for one test file; `cleanup()` from afterEach removes them. */
export class Homes {
  private readonly made: Array<ReturnType<typeof tempHome>> = [];

  async create(chainId: string, aggregator: boolean): Promise<string> {
    const h = tempHome();
    this.made.push(h);
    const res = await runCli(['init', '--home', h.dir, '--chain-id', chainId, ...(aggregator ? ['--aggregator'] : [])]);
    expect(res.code, res.stderr).toBe(0);
    return h.dir;
  }

  /** An aggregator home and `fullNodes` full-node homes of the same chain (each takes the aggregator's genesis). */
  async chain(chainId: string, fullNodes = 1): Promise<{ aggregator: string; full: string[] }> {
    const aggregator = await this.create(chainId, true);
    const full: string[] = [];
    for (let i = 0; i < fullNodes; i++) {
      const home = await this.create(chainId, false);
      copyFileSync(join(aggregator, 'config', 'genesis.json'), join(home, 'config', 'genesis.json'));
      full.push(home);
    }
    return { aggregator, full };
  }

  cleanup(): void {
    for (const h of this.made.splice(0)) h.cleanup();
  }
}
