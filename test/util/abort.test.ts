import { describe, expect, it } from 'vitest';
import { onAbort } from '../../src/util/index.js';

describe('onAbort', () => {
  it('runs at once on a signal already aborted, where an event listener would never fire', () => {
    const c = new AbortController();
    c.abort(new Error('stopped'));
    let ran = 0;
    onAbort(c.signal, () => ran++);
    expect(ran).toBe(1);
  });

  it('runs once on abort, and not at all once removed', () => {
    const a = new AbortController();
    const b = new AbortController();
    let ranA = 0;
    let ranB = 0;
    onAbort(a.signal, () => ranA++);
    const forget = onAbort(b.signal, () => ranB++);
    expect(ranA).toBe(0);
    forget();
    a.abort();
    b.abort();
    expect([ranA, ranB]).toEqual([1, 0]);
  });
});
