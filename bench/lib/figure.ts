import type { Row } from './report.js';
import type { Scope } from './scope.js';

export interface BenchOptions {
  quick: boolean;
  /** Measure only noded's side (for `node --cpu-prof`: a profile of the subject alone). */
  nodedOnly: boolean;
}

/** One benchmark: a named group of figures, each row beside its baseline. */
export interface Bench {
  name: string;
  description: string;
  run(opts: BenchOptions, scope: Scope): Promise<Row[]>;
}
