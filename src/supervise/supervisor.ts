import type { SuperviseEntry } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { SupervisedChild, type ChildStatus, type SuperviseError } from './child.js';

export interface SupervisorOptions {
  /** The node's home: relative cwd paths are under it, and children run there by default. */
  home: string;
  logger: Logger;
  /** A child crashed past its restart limit: the node should stop. */
  onGiveUp: (err: SuperviseError) => void;
}

/**
 * The `supervise:` children of `noded start` (DESIGN.md §11): started in order
 * before the node, each waited for until ready, stopped in reverse after it.
 */
export class Supervisor {
  private constructor(private readonly children: SupervisedChild[]) {}

  /** Starts every entry in order; when one fails, stops those already running and throws its SuperviseError. */
  static async start(entries: SuperviseEntry[], opts: SupervisorOptions): Promise<Supervisor> {
    const supervisor = new Supervisor([]);
    try {
      for (const entry of entries) {
        const child = new SupervisedChild(entry, opts.home, opts.logger, opts.onGiveUp);
        supervisor.children.push(child);
        await child.start();
      }
    } catch (err) {
      await supervisor.stop();
      throw err;
    }
    return supervisor;
  }

  status(): ChildStatus[] {
    return this.children.map((c) => c.status());
  }

  /** Stops the children in reverse order of start. */
  async stop(): Promise<void> {
    for (const child of [...this.children].reverse()) await child.stop();
  }
}
