/**
 * Every contract method answers by promise, and a bad argument is a rejection, never a throw: the
 * bindings and the tests await the call or attach `.catch` to it. An implementation written as
 * `Handlers<T>` may answer at once where it has nothing to wait for; `promised` gives each method
 * the contract's shape back, as `async` would: its value resolves, its throw rejects.
 */

type Method = (...args: never[]) => Promise<unknown>;

/** The methods of `T`, each allowed to return its value directly. */
export type Handlers<T extends Record<keyof T, Method>> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R | Promise<R> : never;
};

export function promised<T extends Record<keyof T, Method>>(handlers: Handlers<T>): T {
  const methods = Object.entries<(...args: unknown[]) => unknown>(handlers).map(([name, handler]) => [
    name,
    // The executor's throw rejects the promise.
    (...args: unknown[]) => new Promise((resolve) => resolve(handler(...args))),
  ]);
  return Object.fromEntries(methods) as T;
}
