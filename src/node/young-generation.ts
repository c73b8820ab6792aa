import { setFlagsFromString } from 'node:v8';

/*
 * Loading the node's modules and opening its parts allocate fast and keep most
 * of it, so V8 grows the young generation to its largest, two semi-spaces of
 * 16 MB; an idle node then collects too seldom for V8 to shrink it again: 32 MB
 * of an idle devnet's resident memory held for nothing. So `noded start` keeps
 * the young generation at its initial size while it starts (a semi-space growth
 * factor of 1), and gives growth back (V8's default factor, 2) once the node
 * runs: a busy node grows it as before, an idle one never does. Measured on the
 * devnet: 137 → 115 MB resident after 30 s idle. V8 reads the factor each time
 * it would grow; --max-semi-space-size, by contrast, is fixed at start.
 */

/** V8's default semi-space growth factor (flag-definitions.h). */
const V8_GROWTH_FACTOR = 2;

/** The operator set the young generation's size in node's own flags: leave it to them. */
const operatorSized = (): boolean =>
  /--(max|min)[-_]semi[-_]space|--semi[-_]space[-_]growth/.test([...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' '));

/** Called by bin/run.js before `noded start` loads anything. */
export function holdYoungGeneration(): void {
  if (!operatorSized()) setFlagsFromString('--semi-space-growth-factor=1');
}

/** Called once the node runs (runDaemon). */
export function releaseYoungGeneration(): void {
  if (!operatorSized()) setFlagsFromString(`--semi-space-growth-factor=${V8_GROWTH_FACTOR}`);
}
