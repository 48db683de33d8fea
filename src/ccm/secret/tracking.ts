/**
 * Counting the calls in flight on one OpenStack client, so a client replaced by a rotation is
 * closed only once nothing still runs on it.
 *
 * A call reaches the client through a chain of property reads (`os.compute.servers.get(…)`), and
 * what it returns may keep calling later (a Pager's `all()`, an async iterator's `next()`). So the
 * wrapper is deep: objects read from a tracked object are tracked, a function call holds a lease
 * until its promise settles, and an object it returns (not plain data) is tracked too. Values a
 * promise resolves to are data and are handed out as is.
 *
 * The proxies stand over an empty shell rather than the real object: a Proxy over a frozen object
 * must return the very same value for its frozen properties, which a wrapper cannot. Methods run
 * with `this` bound to the real object, so classes with private fields keep working.
 */

export interface Leases {
  acquire(): void;
  release(): void;
}

export function tracked<T extends object>(leases: Leases, target: T): T {
  return wrap(leases, target, new WeakMap<object, object>()) as T;
}

function wrap(leases: Leases, target: object, cache: WeakMap<object, object>): object {
  const known = cache.get(target);
  if (known) return known;
  const proxy = new Proxy(Object.create(null) as object, {
    get(_shell, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value === 'function') {
        return (...args: unknown[]) => call(leases, cache, () => Reflect.apply(value, target, args));
      }
      return isObject(value) ? wrap(leases, value, cache) : value;
    },
    has: (_shell, prop) => Reflect.has(target, prop),
    getPrototypeOf: () => Reflect.getPrototypeOf(target),
  });
  cache.set(target, proxy);
  return proxy;
}

function call(leases: Leases, cache: WeakMap<object, object>, fn: () => unknown): unknown {
  leases.acquire();
  let result: unknown;
  try {
    result = fn();
  } catch (err) {
    leases.release();
    throw err;
  }
  if (isThenable(result)) {
    return Promise.resolve(result).finally(() => leases.release());
  }
  leases.release();
  return isObject(result) && hasBehaviour(result) ? wrap(leases, result, cache) : result;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return isObject(value) && typeof (value as { then?: unknown }).then === 'function';
}

/** A class instance (a Pager, an iterator, a ServiceClient) or an object literal with methods: something that may call later. */
function hasBehaviour(value: object): boolean {
  if (Array.isArray(value)) return false;
  const proto: unknown = Reflect.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return true;
  return Object.values(value).some((v) => typeof v === 'function');
}
