import { describe, expect, it } from 'vitest';
import { strictBase64, strictBase64Into } from '../../src/util/index.js';

/** Padded standard base64 spelled out group by group: the definition strictBase64 must match. */
const GROUPED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

describe('strictBase64', () => {
  it('accepts exactly the padded standard base64 strings, checked on every string up to 6 characters of a mixed alphabet', () => {
    const alphabet = ['A', 'z', '9', '+', '/', '=', '-', ' '];
    const differ: string[] = [];
    let checked = 0;
    const all = (s: string): void => {
      checked++;
      const bytes = strictBase64(s);
      if ((bytes !== null) !== GROUPED.test(s)) differ.push(s);
      // Decoding into a buffer accepts the same texts and writes the same bytes.
      const target = Buffer.alloc(3 + Math.ceil(s.length / 4) * 3);
      const written = strictBase64Into(s, target, 3);
      if ((written === null) !== (bytes === null) || (bytes && !target.subarray(3, 3 + written!).equals(bytes))) differ.push(`into: ${s}`);
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

  it('refuses to decode into a buffer without room for the bytes the text announces', () => {
    expect(() => strictBase64Into('AAAA', Buffer.alloc(4), 2)).toThrow(/3 bytes do not fit at 2 of 4/);
    expect(strictBase64Into('AAAA', Buffer.alloc(4), 1)).toBe(3);
  });
});
