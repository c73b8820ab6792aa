import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { initHome } from '../../src/home/index.js';
import { tempHome } from './daemon.js';

/**
 * Node homes for one test file; `cleanup()` from afterEach removes them. Each is
 * written by initHome, the function `noded init` runs, in this process: a
 * `noded init` child per home cost a whole CLI start-up, and the command itself
 * has its own tests (test/cli/commands.test.ts).
 */
export class Homes {
  private readonly made: Array<ReturnType<typeof tempHome>> = [];

  async create(chainId: string, aggregator: boolean): Promise<string> {
    const h = tempHome();
    this.made.push(h);
    initHome({ home: h.dir, chainId, aggregator, force: false });
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
