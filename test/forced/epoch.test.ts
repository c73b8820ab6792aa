import { describe, expect, it } from 'vitest';
import { epochOf, graceBoundary, gracePeriodEpochs, nextEpoch } from '../../src/forced/index.js';

// Cases from ev-node types/epoch_test.go and the ADR-019 grace examples (docs/adr/adr-019-forced-inclusion-mechanism.md).
describe('forced-inclusion epochs (ev-node types/epoch.go)', () => {
  it('numbers epochs from da_start_height, boundaries inclusive', () => {
    const rules = { daStartHeight: 100n, epochSize: 10n };
    expect(epochOf(100n, rules)).toEqual({ number: 1n, start: 100n, end: 109n });
    expect(epochOf(109n, rules)).toEqual({ number: 1n, start: 100n, end: 109n });
    expect(epochOf(110n, rules)).toEqual({ number: 2n, start: 110n, end: 119n });
    expect(epochOf(50n, rules), 'before the start: the first epoch').toEqual({ number: 1n, start: 100n, end: 109n });
    expect(nextEpoch(epochOf(105n, rules), rules)).toEqual({ number: 2n, start: 110n, end: 119n });
    expect(epochOf(0n, { daStartHeight: 0n, epochSize: 1n })).toEqual({ number: 1n, start: 0n, end: 0n });
  });

  it('grace boundary: epoch end + one epoch, extended by fullness up to 4 epochs (syncer.go gracePeriodForEpoch)', () => {
    const rules = { daStartHeight: 51n, epochSize: 50n };
    const epoch = epochOf(75n, rules);
    expect(epoch.end).toBe(100n);
    const max = 1000;
    expect(
      graceBoundary(
        epoch,
        rules,
        gracePeriodEpochs(epoch, () => 0, max),
      ),
      'ADR example 3: boundary 150',
    ).toBe(150n);
    // Every DA height at 80% of the largest blob: not above the threshold, no extension.
    expect(gracePeriodEpochs(epoch, () => 800, max)).toBe(1n);
    // 1600 bytes a DA height is one threshold band above 800: one more epoch.
    expect(gracePeriodEpochs(epoch, () => 1600, max)).toBe(2n);
    expect(
      gracePeriodEpochs(epoch, () => 100_000, max),
      'capped',
    ).toBe(4n);
  });
});
