import { setFlagsFromString } from 'node:v8';

/**
 * Largest V8 semi-space of the daemon, in MB (V8's default on 64-bit: 16).
 * Start-up's allocations grow the young generation to its largest, two
 * semi-spaces of 16 MB, and an idle node never collects often enough for V8
 * to shrink it: 32 MB of an idle devnet's resident memory. The node's garbage
 * is short-lived (requests, blocks being built) and dies young in 2 × 4 MB as
 * well; the idle devnet keeps some 13 MB less (bench figure rss).
 */
const MAX_SEMI_SPACE_MB = 4;

/**
 * Caps the young generation, unless the operator set its size in the node's own flags (NODE_OPTIONS, node --max-semi-space-size).
 * Called by bin/run.js before `noded start` loads anything: V8 never shrinks a young
 * generation already grown, so a cap set later does nothing.
 */
export function capYoungGeneration(): void {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
  if (!/--max[-_]semi[-_]space[-_]size/.test(flags)) setFlagsFromString(`--max-semi-space-size=${MAX_SEMI_SPACE_MB}`);
}
