import { describe, expect, it } from 'vitest';

type WithResolvers = <T>() => { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void };
const ctor = Promise as unknown as { withResolvers?: WithResolvers };

describe('Promise.withResolvers polyfill', () => {
  it('provides a working Promise.withResolvers, and loading it again changes nothing', async () => {
    await import('../../src/util/polyfill.js');
    const installed = ctor.withResolvers;
    expect(installed).toBeTypeOf('function');
    const { promise, resolve } = installed!<number>();
    resolve(42);
    await expect(promise).resolves.toBe(42);
    const rejected = installed!<number>();
    rejected.reject(new Error('no'));
    await expect(rejected.promise).rejects.toThrow('no');

    // The query loads a second instance of the module; typed as a plain string, the specifier is not resolved by tsc.
    const again: string = '../../src/util/polyfill.js?again';
    await import(again);
    expect(ctor.withResolvers).toBe(installed);
  });
});
