import { describe, expect, it } from 'vitest';
import { strictBase64 } from '../../src/util/index.js';

/** Padded standard base64 spelled out group by group: the definition strictBase64 must match. */
const GROUPED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

describe('strictBase64', () => {
  it('accepts exactly the padded standard base64 strings, checked on every string up to 6 characters of a mixed alphabet', () => {
    const alphabet = ['A', 'z', '9', '+', '/', '=', '-', ' '];
    const differ: string[] = [];
    let checked = 0;
    const all = (s: string): void => {
      checked++;
      if ((strictBase64(s) !== null) !== GROUPED.test(s)) differ.push(s);
      if (s.length < 6) for (const c of alphabet) all(s + c);
    };
    all('');
    expect(differ).toEqual([]);
    expect(checked).toBeGreaterThan(290_000);
  });

  it('takes a 40 MB base64 blob, which the grouped pattern refuses with a stack overflow', () => {
    const blob = Buffer.alloc(30 * 1024 * 1024, 7).toString('base64');
    expect(() => GROUPED.test(blob)).toThrow(/call stack/);
    expect(strictBase64(blob)?.equals(Buffer.alloc(30 * 1024 * 1024, 7))).toBe(true);
    expect(strictBase64(blob.slice(1))).toBeNull();
  });
});
