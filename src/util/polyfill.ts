/**
 * Runtime polyfills for Node 20 (DESIGN.md §2). libp2p 3 calls
 * `Promise.withResolvers` (ES2024, Node >= 22). Import this module for its side
 * effect before anything that loads libp2p: the entry point (bin/run.js), vitest
 * setupFiles, and src/p2p itself. Idempotent: a runtime that has the method keeps its own.
 */

interface PromiseWithResolversShape<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const PromiseCtor = Promise as unknown as { withResolvers?: <T>() => PromiseWithResolversShape<T> };

if (typeof PromiseCtor.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    enumerable: false,
    value: function withResolvers<T>(this: PromiseConstructor): PromiseWithResolversShape<T> {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      // `this` keeps subclass semantics (Promise.withResolvers.call(MyPromise)) as the spec does.
      const Ctor = typeof this === 'function' ? this : Promise;
      const promise = new Ctor<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
