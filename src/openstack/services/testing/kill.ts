/**
 * An engine's API as a process that dies right after one of its OpenStack writes: the write
 * reaches the cloud and takes effect, then the answer is lost and the call throws `Killed` — the
 * worst moment for crash consistency, since the caller never hears of what was made. Every write
 * after that throws `Killed` without reaching the cloud. Reads pass untouched.
 */

/** Thrown in place of the fatal write's answer, and by every write after it. */
export class Killed extends Error {
  override readonly name = 'Killed';
}

/** The client methods that write, across the services the engines use. */
const WRITE_METHODS = new Set([
  'create',
  'update',
  'delete',
  'replace',
  'associate',
  'disassociate',
  'add',
  'remove',
  'removeAll',
  'addSubports',
  'removeSubports',
  'addInterface',
  'removeInterface',
]);

export interface KillableApi<T> {
  api: T;
  /** Writes made, the fatal one included. */
  writes: () => number;
  /** Their client method names, in order (`delete`, `removeSubports`, …). */
  log: () => string[];
}

/**
 * Wraps `api` (an OpenStackClient, or anything with the engines' service namespaces); the process dies right after the write for which
 * `dies(method, count)` is true (`count` includes that write).
 */
export function killable<T extends object>(
  api: T,
  dies: (method: string, count: number) => boolean,
): KillableApi<T> {
  const log: string[] = [];
  let dead = false;
  const wrap = (target: object): object =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value: unknown = Reflect.get(obj, prop, receiver);
        if (typeof value === 'function' && typeof prop === 'string' && WRITE_METHODS.has(prop)) {
          return async (...args: unknown[]) => {
            if (dead) throw new Killed(`killed before write ${log.length + 1}`);
            const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(obj, args);
            log.push(prop);
            if (dies(prop, log.length)) {
              dead = true;
              throw new Killed(`killed after write ${log.length} (${prop})`);
            }
            return result;
          };
        }
        if (typeof value === 'function') return (value as (...a: unknown[]) => unknown).bind(obj);
        if (value && typeof value === 'object') return wrap(value);
        return value;
      },
    });
  return { api: wrap(api) as T, writes: () => log.length, log: () => [...log] };
}
