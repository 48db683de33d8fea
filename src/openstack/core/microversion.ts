/**
 * A service's microversion, negotiated once per ServiceClient, and a Pager that settles it before
 * its first page. Nova and Cinder answer a call without a microversion header as their oldest
 * version, so their modules settle the microversion before every call, both through these.
 */
import { requireApiVersion, type ApiVersion } from './api-version.ts';
import { raceSignal } from '../../lib/clock.ts';
import { Pager, type Page, type PagerOptions } from './pagination.ts';
import type { ServiceClient } from './service-client.ts';

/** The microversion calls on a ServiceClient use, negotiated on first use. */
export type MicroversionOf = (sc: ServiceClient, signal?: AbortSignal) => Promise<ApiVersion>;

/**
 * The microversion of a ServiceClient: the one set on it (by the caller, by `withMicroversion`, or
 * by an earlier negotiation), else `wanted` or the cloud's maximum if lower, read once
 * (single-flight per ServiceClient, and cached per endpoint by the core) and then set on it.
 */
export function negotiatedMicroversion(wanted: string): MicroversionOf {
  const negotiations = new WeakMap<ServiceClient, Promise<string>>();
  return async (sc, signal) => {
    if (sc.microversion !== undefined) return requireApiVersion(sc.microversion);
    let flight = negotiations.get(sc);
    if (!flight) {
      // No caller's signal on the shared read: one caller giving up must not fail the others.
      flight = sc.negotiateMicroversion(wanted);
      negotiations.set(sc, flight);
      flight.catch(() => negotiations.delete(sc));
    }
    return requireApiVersion(await raceSignal(flight, signal));
  };
}

export interface NegotiatingPagerOptions extends PagerOptions {
  /** Settles the microversion of `client`: `computeMicroversion`, `blockStorageMicroversion`. */
  negotiate: MicroversionOf;
}

/** A Pager that settles the microversion before its first page, so list calls carry it like every other call. */
export class NegotiatingPager<T> extends Pager<T> {
  private readonly sc: ServiceClient;
  private readonly signal: AbortSignal | undefined;
  private readonly negotiate: MicroversionOf;

  constructor(options: NegotiatingPagerOptions) {
    super(options);
    this.sc = options.client;
    this.signal = options.signal;
    this.negotiate = options.negotiate;
  }

  override async *pages(
    options: { signal?: AbortSignal | undefined } = {},
  ): AsyncGenerator<Page<T>, void, undefined> {
    await this.negotiate(this.sc, options.signal ?? this.signal);
    yield* super.pages(options);
  }
}
