import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../../src/util/index.js';

describe('parseJsonExact', () => {
  it('keeps integers beyond 2^53 exact and leaves the rest as JSON.parse would', () => {
    const text = '{"time":1763798400123456789,"h":42,"neg":-9223372036854775807,"f":1.5e3,"s":"a:12345678901234567890\\"x","a":[18446744073709551615]}';
    expect(parseJsonExact(text)).toEqual({
      time: '1763798400123456789',
      h: 42,
      neg: '-9223372036854775807',
      f: 1500,
      s: 'a:12345678901234567890"x',
      a: ['18446744073709551615'],
    });
  });
});
