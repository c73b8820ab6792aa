import { setFlagsFromString } from 'node:v8';

/*
 * Loading the node's modules and opening its parts allocate fast and keep
 * much of it, and an idle node then collects too seldom for V8 to give the
 * heap it grew back, so `noded start` holds V8 to two settings while it
 * starts and gives them back once the node runs (a busy node then grows its
 * heap as before):
 *
 * - The young generation stays at its initial size (a semi-space growth factor
 *   of 1): V8 would grow it to its largest, two semi-spaces of 16 MB, and never
 *   shrink it on an idle node. Measured on the devnet: 137 → 115 MB resident
 *   after 30 s idle. V8 reads the factor each time it would grow;
 *   --max-semi-space-size, by contrast, is fixed at start.
 * - --optimize-for-size: each full collection while it starts compacts the old
 *   generation and returns its free pages, and the old generation grows in
 *   smaller steps. Without it the start-up's garbage left ~39 MB of heap
 *   committed for ~28 MB live, returned only when V8's memory reducer found the
 *   node idle enough, which on a loaded machine was often after the bench's
 *   60 s (rss rounds of 93 and 100 MB from one build). With it: ~30 MB
 *   committed. It also makes the compiler favour size, so it is not kept.
 */

/** V8's default semi-space growth factor (flag-definitions.h). */
const V8_GROWTH_FACTOR = 2;

/** The operator sized the heap in node's own flags: leave it to them. */
const operatorSized = (): boolean =>
  /--(max|min)[-_]semi[-_]space|--semi[-_]space[-_]growth|--optimize[-_]for[-_]size/.test([...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' '));

/** Called by bin/run.js before `noded start` loads anything. */
export function holdStartupHeap(): void {
  if (!operatorSized()) setFlagsFromString('--semi-space-growth-factor=1 --optimize-for-size');
}

/** Called once the node runs (runDaemon). */
export function releaseStartupHeap(): void {
  if (!operatorSized()) setFlagsFromString(`--semi-space-growth-factor=${V8_GROWTH_FACTOR} --no-optimize-for-size`);
}
