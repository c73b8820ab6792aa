/** Every sample of one side of a figure, and their median (the figure reported). */
export interface Sample {
  samples: number[];
  median: number;
}

export interface Paired {
  noded: Sample;
  baseline: Sample;
}

export interface RoundOptions {
  /**
   * Run both sides of a round at once instead of one after the other. Only for
   * figures where the sides are idle and do not compete (resident memory), so a
   * one-minute figure does not take two minutes a round.
   */
  together?: boolean;
  /** Skip the baseline (for profiling the subject alone); its median is then NaN. */
  nodedOnly?: boolean;
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const sample = (samples: number[]): Sample => ({ samples, median: median(samples) });

/**
 * Measures a figure beside its baseline: `rounds` rounds of both sides, the
 * order swapped every round, so both sides see the same machine load over the run (the host is
 * shared and noisy) and neither always runs first. Reports each side's median.
 */
export async function interleave(
  rounds: number,
  sides: { baseline: () => Promise<number>; noded: () => Promise<number> },
  opts: RoundOptions = {},
): Promise<Paired> {
  const noded: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < rounds; i++) {
    if (opts.nodedOnly) {
      noded.push(await sides.noded());
    } else if (opts.together) {
      const [b, n] = await Promise.all([sides.baseline(), sides.noded()]);
      baseline.push(b);
      noded.push(n);
    } else if (i % 2 === 0) {
      baseline.push(await sides.baseline());
      noded.push(await sides.noded());
    } else {
      // The other order every other round: whatever the first run of a round leaves behind
      // (JIT warm-up, a store to compact, a busier heap) falls on both sides alike.
      noded.push(await sides.noded());
      baseline.push(await sides.baseline());
    }
  }
  return { noded: sample(noded), baseline: sample(baseline) };
}

/** The same figure in other units (blocks/s → txs/s). */
export function scalePaired(p: Paired, factor: number): Paired {
  const scale = (s: Sample) => sample(s.samples.map((v) => v * factor));
  return { noded: scale(p.noded), baseline: scale(p.baseline) };
}
